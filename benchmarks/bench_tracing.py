"""Tracing overhead: traced against untraced warm search, in one process; prints figures only.

Usage:
    python benchmarks/bench_tracing.py [--dataset ../shared/datasets/scifact] [--queries 300] [--rounds 3]

The same queries run through two Retrievers over one open index: one with the
no-op tracer, one with the real tracer provider writing to a local trace
store (BatchSpanProcessor, 100 candidates recorded per stage). Rounds
alternate between the two so drift on a shared machine hits both alike.
Target: tracing adds at most 5% of the p50.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from opentelemetry.trace import NoOpTracer

REPO = Path(__file__).resolve().parents[1]


def timed(retriever, requests, vectors) -> list[float]:
    out = []
    for req, vec in zip(requests, vectors):
        start = time.perf_counter()
        retriever.search(req, query_vector=vec)
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default=str(REPO.parent / "shared" / "datasets" / "scifact"))
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mode", default="fast")
    parser.add_argument("--embed", action="store_true", help="embed each query inside the search (default: precomputed)")
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    from retriever.config import RetrieverConfig
    from retriever.data.beir import load_dataset
    from retriever.embedding import Embedder
    from retriever.index import build_index, open_index
    from retriever.pipeline import Retriever
    from traces.setup import TraceSettings, make_tracer_provider

    home = Path(os.environ.get("SEARCHTRACE_HOME") or tempfile.mkdtemp(prefix="searchtrace-bench-"))
    config = RetrieverConfig.resolve(home=home, environ={})
    model = Embedder()
    dataset = load_dataset(Path(args.dataset))
    index = open_index(build_index(dataset, config, model, progress=False), config)
    texts = [q.text for q in dataset.queries][: args.queries]
    requests = [{"query": t, "mode": args.mode, "top_k": 10} for t in texts]
    vectors = [None] * len(texts) if args.embed else list(model.encode_queries(texts))

    settings = TraceSettings.resolve(environ={})
    provider, handles = make_tracer_provider(home / "bench-traces", settings)
    plain = Retriever(index, model, config, tracer=NoOpTracer())
    traced = Retriever(index, model, config, tracer=provider.get_tracer("bench"), capture=settings.capture,
                       deferred=handles.deferred)
    timed(plain, requests[:30], vectors[:30])
    timed(traced, requests[:30], vectors[:30])
    untraced_ms, traced_ms = [], []
    for _ in range(args.rounds):
        untraced_ms += timed(plain, requests, vectors)
        traced_ms += timed(traced, requests, vectors)
    handles.shutdown()
    p50_u, p50_t = float(np.median(untraced_ms)), float(np.median(traced_ms))
    print(json.dumps({
        "dataset": dataset.name, "mode": args.mode, "queries": len(texts), "rounds": args.rounds,
        "query_embedding": "inside search" if args.embed else "precomputed (batch)",
        "untraced_p50_ms": round(p50_u, 3), "traced_p50_ms": round(p50_t, 3),
        "untraced_p95_ms": round(float(np.percentile(untraced_ms, 95)), 3),
        "traced_p95_ms": round(float(np.percentile(traced_ms, 95)), 3),
        "overhead_p50_pct": round(100 * (p50_t - p50_u) / p50_u, 2),
        "spans_exported": {k: s.exported_spans for k, s in handles.stats().items()} if hasattr(
            next(iter(handles.stats().values()), None), "exported_spans") else {k: str(s) for k, s in handles.stats().items()},
    }, indent=2))
    index.close()


if __name__ == "__main__":
    main()
