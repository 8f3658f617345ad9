"""Opening the ONNX encoder: the cached folder (tensors in ``weights.bin``) against one inline file.

Usage (the machine is shared: take the benchmark lock):
    flock /tmp/searchtrace-bench.lock python benchmarks/bench_model_open.py [--home HOME] [--runs 7]

The home's cached model folder (built first if missing) is what the embedder
opens. The same model saved as a single file with its tensors inline (the
layout earlier versions cached) is written to a temporary folder. Each run
starts a fresh process that opens one of the two with the embedder's session
options and embeds one query; the layouts take turns, and the figure is the
CPU seconds (user + system) of ``InferenceSession(...)`` alone, measured inside
that process, median over the runs. The two outputs are compared bit for bit.
Prints figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PROBE = """
import json, sys, time
import numpy as np
import onnxruntime as ort
options = ort.SessionOptions()
options.intra_op_num_threads = 2
options.inter_op_num_threads = 1
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
options.add_session_config_entry("session.intra_op.allow_spinning", "0")
options.log_severity_level = 3
started = time.process_time()
session = ort.InferenceSession(sys.argv[1], options, providers=["CPUExecutionProvider"])
opened = time.process_time() - started
ids = np.array([[101, 7570, 2003, 1996, 4414, 102]], dtype=np.int64)
vector = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0][0]
print(json.dumps({"open_cpu_s": opened, "vector": vector.tolist()}))
"""


def open_once(graph: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, str(graph)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--home", help="searchtrace home holding the cached model (default: the usual home)")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()

    import onnx

    from searchtrace.home import Home
    from searchtrace.retriever.embedding.encoder import Precision
    from searchtrace.retriever.embedding.model_files import ModelFiles
    from searchtrace.retriever.embedding.onnx_model import ensure_onnx

    home = Home(Path(args.home)) if args.home else Home.resolve()
    built = ensure_onnx(ModelFiles.bundled(), home, Precision.FP32)
    assert isinstance(built.source, Path), "the home cannot hold the model"
    with tempfile.TemporaryDirectory(prefix="searchtrace-inline-") as tmp:
        inline = Path(tmp) / "model.onnx"
        onnx.save_model(onnx.load(str(built.source)), str(inline))  # tensors inline, one file
        layouts = {"folder (weights.bin)": built.source, "single file (inline)": inline}
        times: dict[str, list[float]] = {name: [] for name in layouts}
        vectors: dict[str, list[float]] = {}
        for _ in range(args.runs):
            for name, graph in layouts.items():
                out = open_once(graph)
                times[name].append(out["open_cpu_s"])
                vectors[name] = out["vector"]
    print(f"InferenceSession(...) CPU seconds, fresh process each, median of {args.runs} (range):")
    for name, values in times.items():
        print(f"  {name:22} {statistics.median(values):.3f} s  ({min(values):.3f}-{max(values):.3f})")
    first, second = vectors.values()
    print(f"outputs identical: {first == second}")


if __name__ == "__main__":
    main()
