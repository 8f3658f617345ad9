"""What the integrity checks added by issue 23 cost: the trace store's quick check, the model folder's sum.

Usage:
    python benchmarks/bench_integrity.py --home HOME [--traces 10000] [--runs 5]

* ``traces list``/``show`` run SQLite's quick check before reading: timed on a
  store of ``--traces`` fake searches (11 spans each, as a real search writes),
  built in a temporary folder.
* Every model load sums the model folder's files (``onnx_model._sum64``): timed
  on HOME's fp32 model folder (HOME: a home where a search ran once), the
  first read, then warm (the pages cached).

Prints JSON: medians and ranges in milliseconds of wall time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))


def _timed(run: object, runs: int) -> dict[str, float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        run()  # type: ignore[operator]
        times.append((time.perf_counter() - started) * 1000)
    return {"median_ms": round(statistics.median(times), 1), "min_ms": round(min(times), 1),
            "max_ms": round(max(times), 1)}


def quick_check(n_traces: int, runs: int) -> dict[str, object]:
    from trace_fixtures import FakeSearch, record

    from searchtrace.traces import TraceStore
    from searchtrace.traces.store.damage import is_damaged

    folder = Path(tempfile.mkdtemp(prefix="bench-integrity-"))
    store = TraceStore(folder / "traces.sqlite")
    t0, step = 1_700_000_000_000_000_000, 1_000_000_000
    for start in range(0, n_traces, 1000):
        spans, _ = record(*(FakeSearch(start_ns=t0 + (start + i) * step, candidates=100)
                            for i in range(min(1000, n_traces - start))))
        store.write(spans)
    store.close()
    path = folder / "traces.sqlite"
    return {"traces": n_traces, "mib": round(path.stat().st_size / 2**20, 1),
            **_timed(lambda: is_damaged(path), runs)}


def model_sum(home: Path, runs: int) -> dict[str, object]:
    from searchtrace.retriever.embedding.onnx_model import WEIGHTS, _sum64

    [weights] = sorted(home.glob(f"cache/models/*-fp32/{WEIGHTS}"))
    first = _timed(lambda: _sum64(weights), 1)
    return {"mib": round(weights.stat().st_size / 2**20, 1), "first_ms": first["median_ms"],
            **_timed(lambda: _sum64(weights), runs)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--home", type=Path, required=True, help="a home with the fp32 model folder built")
    p.add_argument("--traces", type=int, default=10_000)
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    print(json.dumps({"quick_check": quick_check(args.traces, args.runs), "model_sum": model_sum(args.home, args.runs)},
                     indent=2))


if __name__ == "__main__":
    main()
