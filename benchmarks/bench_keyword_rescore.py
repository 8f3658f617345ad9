"""Builds of the same data, and what the keyword stage's exact rescoring costs.

Usage:
    python benchmarks/bench_keyword_rescore.py DATASET --home HOME [--builds 3] [--depth 100]

For each of ``--builds`` forced builds of DATASET's index in HOME:

* the keyword rankings (ids and scores at ``--depth``) of every query, from
  Qdrant's own scores (what the stage returned before issue 23) and from the
  stage, which rescores 2 x depth + 10 of Qdrant's candidates exactly;
* the time per query of the engine at ``depth`` (the old stage's engine call),
  and of the engine at 2 x depth + 10 plus the exact rescoring (the new one's).

Prints JSON: how many distinct ranking sets the builds gave each way (1 = every
build ranked every query the same), the queries whose engine ranking differed
from the first build's, the BM25 statistics file's sha256 per build, and
median milliseconds per query of each, and the ratio new / old.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time
from pathlib import Path

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--builds", type=int, default=3)
    parser.add_argument("--depth", type=int, default=100)
    args = parser.parse_args()

    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.retriever.data.beir import load_dataset
    from searchtrace.retriever.embedding.cache import Embedder
    from searchtrace.retriever.index import build_index, open_index
    from searchtrace.retriever.index.build import TERM_STATS
    from searchtrace.retriever.stages.keyword import keyword
    from searchtrace.retriever.vectorstore.term_stats import rescore_limit

    config = resolve_config(home=args.home, environ={})
    dataset = load_dataset(args.dataset)
    queries = [q.text for q in dataset.queries]
    embedder = Embedder(config.home)
    engine_runs, stage_runs, stats_sums = [], [], []
    old_ms: list[float] = []
    new_ms: list[float] = []
    for _ in range(args.builds):
        path = build_index(dataset, config, embedder, progress=False, force=True)
        stats_sums.append(hashlib.sha256((path / TERM_STATS).read_bytes()).hexdigest()[:16])
        index = open_index(path, config)
        engine, stage = [], []
        for text in queries:
            sparse = index.bm25.encode_query(text)
            if not sparse.indices:
                continue
            started = time.perf_counter()
            hits = index.store.search_sparse([sparse], args.depth)[0]
            old_ms.append((time.perf_counter() - started) * 1000)
            engine.append(tuple((index.doc_ids[h.id], h.score) for h in hits))
            started = time.perf_counter()
            wide = index.store.search_sparse([sparse], rescore_limit(args.depth))[0]
            index.term_stats.rank(sparse, np.array([h.id for h in wide], dtype=np.int64), args.depth)
            new_ms.append((time.perf_counter() - started) * 1000)
            found = keyword(index.store, index.bm25, index.term_stats, text, args.depth, index.doc_ids)
            stage.append(tuple(zip(found.candidates.ids.tolist(), found.candidates.scores.tolist())))
        index.close()
        engine_runs.append(tuple(engine))
        stage_runs.append(tuple(stage))
    print(json.dumps({
        "dataset": dataset.name, "docs": len(list(dataset.docs)), "queries": len(queries), "builds": args.builds,
        "depth": args.depth,
        "distinct_rankings_engine": len(set(engine_runs)),
        "distinct_rankings_stage": len(set(stage_runs)),
        "queries_engine_ranking_differs": [sum(a != b for a, b in zip(engine_runs[0], run)) for run in engine_runs[1:]],
        "term_stats_sha256": stats_sums,
        "old_ms_median": round(statistics.median(old_ms), 3),
        "new_ms_median": round(statistics.median(new_ms), 3),
        "new_over_old": round(statistics.median(new_ms) / statistics.median(old_ms), 2),
    }, indent=2))


if __name__ == "__main__":
    main()
