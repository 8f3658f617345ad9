"""Tracing overhead: traced against untraced warm search, in one process; prints figures only.

Usage:
    python benchmarks/bench_tracing.py [--dataset ../shared/datasets/scifact] [--queries 300] [--rounds 3] [--embed]

The same queries run through two Retrievers over one open index: one with the
no-op tracer, one with the real tracer provider writing to a local trace
store (BatchSpanProcessor, 100 candidates recorded per stage). The queries go
in blocks of ``--block``, each block through both retrievers in alternating
order, so drift on a shared machine hits both alike; the store is flushed
(untimed) after each traced block so that its export thread competes with
traced searches only, as it would in a process that traces everything.
Besides wall-clock percentiles it reports CPU time, which other load disturbs
far less: the search thread's per search, and the export's per traced search.
Target: tracing adds at most 5% of the p50.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from opentelemetry.trace import NoOpTracer

REPO = Path(__file__).resolve().parents[1]
EXPORT_THREAD = "OtelBatchSpanRecordProcessor"  # the SDK's name for the batch worker thread


def timed(retriever, request, vector) -> tuple[float, float]:
    """Wall and search-thread CPU milliseconds of one search."""
    cpu, wall = time.thread_time(), time.perf_counter()
    retriever.search(request, query_vector=vector)
    return (time.perf_counter() - wall) * 1000, (time.thread_time() - cpu) * 1000


def export_cpu_s() -> float:
    """CPU seconds used so far by the batch processors' worker threads."""
    return sum(time.clock_gettime(time.pthread_getcpuclockid(t.ident)) for t in threading.enumerate()
               if t.name == EXPORT_THREAD and t.ident is not None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default=str(REPO.parent / "shared" / "datasets" / "scifact"))
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--block", type=int, default=50, help="queries per block")
    parser.add_argument("--mode", default="fast")
    parser.add_argument("--embed", action="store_true", help="embed each query inside the search (default: precomputed)")
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    from searchtrace.environment import SEARCHTRACE_HOME
    from searchtrace.envvalues import text
    from searchtrace.home import Home
    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.retriever.data.beir import load_dataset
    from searchtrace.retriever.embedding.cache import Embedder
    from searchtrace.retriever.index import build_index, open_index
    from searchtrace.retriever.search.pipeline import Retriever
    from searchtrace.traces.export.provider import TraceSettings, make_tracer_provider

    home = Path(text(os.environ, SEARCHTRACE_HOME) or tempfile.mkdtemp(prefix="searchtrace-bench-"))
    config = resolve_config(home=home, environ={})
    model = Embedder(config.home)
    dataset = load_dataset(Path(args.dataset))
    index = open_index(build_index(dataset, config, model, progress=False), config)
    texts = [q.text for q in dataset.queries][: args.queries]
    requests = [{"query": t, "mode": args.mode, "top_k": 10} for t in texts]
    vectors = [None] * len(texts) if args.embed else list(model.encode_queries(texts))

    settings = TraceSettings.resolve(environ={})
    provider, handles = make_tracer_provider(Home(Path(tempfile.mkdtemp(prefix="searchtrace-bench-traces-"))), settings)
    plain = Retriever(index, model, config, tracer=NoOpTracer())
    traced = Retriever(index, model, config, tracer=provider.get_tracer("bench"), capture=settings.capture,
                       deferred=handles.deferred)
    for req, vec in zip(requests[:30], vectors[:30]):
        timed(plain, req, vec)
        timed(traced, req, vec)
    handles.force_flush()
    export_before, flush_s = export_cpu_s(), 0.0
    runs: dict[str, list[tuple[float, float]]] = {"untraced": [], "traced": []}
    blocks = [list(zip(requests, vectors))[i:i + args.block] for i in range(0, len(requests), args.block)]
    for r in range(args.rounds):
        for b, block in enumerate(blocks):
            pair = (("untraced", plain), ("traced", traced))
            for name, retriever in pair if (b + r) % 2 == 0 else pair[::-1]:
                runs[name] += [timed(retriever, req, vec) for req, vec in block]
                if retriever is traced:
                    cpu = time.thread_time()
                    handles.force_flush()  # exports the block's remainder on this thread
                    flush_s += time.thread_time() - cpu
    export_s = export_cpu_s() - export_before + flush_s
    handles.shutdown()
    wall = {k: np.array([w for w, _ in v]) for k, v in runs.items()}
    cpu_ms = {k: np.array([c for _, c in v]) for k, v in runs.items()}
    p50_u, p50_t = float(np.median(wall["untraced"])), float(np.median(wall["traced"]))
    searches = len(runs["traced"])
    print(json.dumps({
        "dataset": dataset.name, "mode": args.mode, "queries": len(texts), "rounds": args.rounds,
        "query_embedding": "inside search" if args.embed else "precomputed (batch)",
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "untraced_p50_ms": round(p50_u, 3), "traced_p50_ms": round(p50_t, 3),
        "untraced_p95_ms": round(float(np.percentile(wall["untraced"], 95)), 3),
        "traced_p95_ms": round(float(np.percentile(wall["traced"], 95)), 3),
        "overhead_p50_pct": round(100 * (p50_t - p50_u) / p50_u, 2),
        "paired_median_diff_ms": round(float(np.median(wall["traced"] - wall["untraced"])), 3),
        "search_thread_cpu_p50_ms": {k: round(float(np.median(c)), 3) for k, c in cpu_ms.items()},
        "export_thread_cpu_per_search_ms": round(1000 * export_s / searches, 3),
        "spans_exported": {k: s.exported_spans for k, s in handles.stats().items()},
    }, indent=2))
    index.close()


if __name__ == "__main__":
    main()
