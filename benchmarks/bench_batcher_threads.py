"""In-process: searches from 1 and 4 threads with the query embedding inline or through the micro-batcher.

Usage:
    [OMP_WAIT_POLICY=PASSIVE] python benchmarks/bench_batcher_threads.py {plain,batch} [--home DIR]
        [--dataset datasets/sample] [--searches 80]

``plain``: the Embedder in the searching thread; ``batch``: through ``BatchingEncoder``
(the model in the batcher's thread, as ``searchtrace serve`` runs it). Untraced, fast mode.
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ThreadPoolExecutor


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("how", choices=["plain", "batch"])
    p.add_argument("--home", default="/tmp/searchtrace-bench-batcher-home")
    p.add_argument("--dataset", default="datasets/sample")
    p.add_argument("--searches", type=int, default=80)
    args = p.parse_args()

    from opentelemetry.trace import NoOpTracer

    from searchtrace.retriever import load_dataset, open_retriever, resolve_config
    from searchtrace.retriever.embedding.cache import Embedder
    from searchtrace.retriever.serve.batcher import BatchingEncoder

    config = resolve_config(home=args.home, environ={})
    embedder = BatchingEncoder(Embedder()) if args.how == "batch" else Embedder()
    retriever = open_retriever(args.dataset, config, progress=False, embedder=embedder, tracer=NoOpTracer())
    queries = [q.text for q in load_dataset(args.dataset).queries][:args.searches]
    for q in queries[:10]:
        retriever.search({"query": q})
    for threads in (1, 4):
        started = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda q: retriever.search({"query": q, "mode": "fast"}), queries))
        print(f"{args.how}, {threads} threads: {len(queries) / (time.perf_counter() - started):.1f} searches/s")
    retriever.close()


if __name__ == "__main__":
    main()
