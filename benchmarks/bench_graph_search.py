"""Graph-mode search latency on MuSiQue; prints measured figures, asserts nothing.

Usage:
    python benchmarks/bench_graph_search.py --home HOME [--shared ../shared/datasets] [--rounds 5]

HOME is a searchtrace home whose MuSiQue index is built (or is built on first
use). In one process, per round and per query, in turn: bare single-query
embedding (the default embedder's ``encode_query``), a warm fast-mode and a warm
graph-mode search (taking turns at going first), the graph stage alone
(``retriever.stages.graph.graph`` on the entities the rewrite stage detects and
the first-pass seed passages, as a search calls it) and its k-hop neighbourhood alone
(``GraphStore.neighbourhood``). Each round gives p50 / p95; the report is the
median over rounds, with the load average before and after: this machine is
shared, so run several rounds. The target: graph-mode search p50 <= 1.25x bare
embedding p50.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SERIES = ("embed", "fast", "graph", "graph_stage", "neighbourhood")
CANDIDATES = 100  # a search request's default candidate depth: the limit a search gives the graph stage


def timed_ms(fn, *args, **kwargs) -> float:
    start = time.perf_counter()
    fn(*args, **kwargs)
    return (time.perf_counter() - start) * 1000


def query_plans(retriever, queries: list[str]) -> list[tuple[str, list[str], list[str]]]:
    """Each query with the entity keys the rewrite stage detects for it and the first-pass
    passages whose entities seed the walk too (``graph.seed_docs``), as a graph search finds them."""
    from searchtrace.retriever.stages.dense import dense
    from searchtrace.retriever.stages.fuse import best_ids
    from searchtrace.retriever.stages.keyword import keyword
    from searchtrace.retriever.stages.rewrite import rewrite

    index, cfg = retriever.index, retriever.config
    plans = []
    for q in queries:
        rw = rewrite(q, index.graph)
        seeds: list[str] = []
        if cfg.graph.seed_docs:
            vector = retriever.embedder.encode_query(q)
            lists = [dense(index.store, vector, CANDIDATES, index.doc_ids, None, retriever._parts_weight,
                           cfg.dense.parts_depth, index.vectors),
                     keyword(index.store, index.bm25, index.term_stats, rw.keyword_query, CANDIDATES,
                             index.doc_ids).candidates]
            seeds = best_ids([c for c in lists if len(c)], cfg.fusion, cfg.graph.seed_docs)
        plans.append((q, [e.key for e in rw.entities], seeds))
    return plans


def one_round(retriever, plans) -> dict[str, list[float]]:
    """Milliseconds of every series for every query, the series taking turns query by query."""
    from searchtrace.retriever.stages.graph import graph

    cfg = retriever.config.graph
    store = retriever.index.graph
    out: dict[str, list[float]] = {k: [] for k in SERIES}
    for i, (q, keys, seeds) in enumerate(plans):
        out["embed"].append(timed_ms(retriever.embedder.encode_query, q))
        for mode in ("fast", "graph") if i % 2 else ("graph", "fast"):  # neither mode always runs second
            out[mode].append(timed_ms(retriever.search, {"query": q, "mode": mode, "top_k": 10}))
        if keys or seeds:
            out["graph_stage"].append(timed_ms(graph, store, keys, cfg.depth, CANDIDATES, cfg, q, seeds))
            out["neighbourhood"].append(timed_ms(store.neighbourhood, keys, cfg.depth, cfg.max_hits))
    return out


def summary(rounds: list[dict[str, list[float]]]) -> dict[str, float]:
    """Median over rounds of each series' p50 and p95, and of the per-round p50 ratios to embedding."""
    out: dict[str, float] = {}
    for k in SERIES:
        for q in (50, 95):
            out[f"{k}_p{q}_ms"] = round(statistics.median(float(np.percentile(r[k], q)) for r in rounds), 3)
    for mode in ("fast", "graph"):
        ratios = [np.percentile(r[mode], 50) / np.percentile(r["embed"], 50) for r in rounds]
        out[f"{mode}_p50_vs_embed"] = round(float(statistics.median(ratios)), 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--home", required=True, help="searchtrace home holding (or to hold) the MuSiQue index")
    parser.add_argument("--shared", default=str(REPO.parent / "shared" / "datasets"))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.retriever.data.beir import load_dataset
    from searchtrace.retriever.embedding.cache import Embedder
    from searchtrace.retriever.index import build_index, open_index
    from searchtrace.retriever.search.pipeline import Retriever

    config = resolve_config(home=Path(args.home), environ={})
    model = Embedder(config.home)
    model.load()
    musique = load_dataset(Path(args.shared) / "musique")
    retriever = Retriever(open_index(build_index(musique, config, model, progress=False), config), model, config)
    plans = query_plans(retriever, [q.text for q in musique.queries])
    load_before = os.getloadavg()
    one_round(retriever, plans)  # warm up
    rounds = [one_round(retriever, plans) for _ in range(args.rounds)]
    report = {"queries": len(plans), "with_entities": sum(1 for _, k, _ in plans if k), "rounds": args.rounds,
              "load_average_before": [round(x, 2) for x in load_before],
              "load_average_after": [round(x, 2) for x in os.getloadavg()], **summary(rounds)}
    retriever.index.close()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
