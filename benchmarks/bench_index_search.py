"""Index and search benchmark on real data; prints measured figures, asserts nothing.

Usage:
    python benchmarks/bench_index_search.py [--shared ../shared/datasets] [--queries 200] [--search-only HOME]
                                            [--index-dataset scifact|musique] [--rounds 3]

Measures, in one process:
  * cold index time and docs/s (SciFact, or ``--index-dataset``) against bare
    sentence-transformers encoding of the same texts: the passages, and with
    passage parts on (the default) their titles and sentences too (target: ratio >= 0.9);
  * re-index of the unchanged corpus (content-addressed reuse), and a forced
    rebuild served by the embedding cache (target: <= 2% of cold);
  * warm search p50/p95 per mode against bare single-query embedding time
    (target: p50 <= 1.25x), on SciFact (fast) and MuSiQue (fast and graph): per
    query the bare embedding and each mode take turns, and each round's p50 / p95
    is reduced to the median over ``--rounds`` (the ratio: median of the per-round ratios).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def bare_encode_seconds(model, texts: list[str]) -> float:
    model.load()
    start = time.perf_counter()
    model.encode_documents(texts, batch_size=64)
    return time.perf_counter() - start


def timed_ms(call) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def interleaved(retriever, model, queries: list[str], modes: tuple[str, ...], rounds: int) -> dict:
    """Per query, bare embedding and a search in each mode, taking turns at going first, so
    load drifting over the run touches every series alike. p50 / p95 per round, then the
    median over rounds."""
    model.load()

    def search(q: str, mode: str) -> None:
        retriever.search({"query": q, "mode": mode, "top_k": 10})  # an error raises

    series = ("embed", *modes)
    calls: dict[str, Callable[[str], object]] = {
        "embed": model.encode_query}
    calls.update({m: functools.partial(search, mode=m) for m in modes})
    for q in queries[:10]:  # warm up
        for name in series:
            calls[name](q)
    per_round: dict[str, list[tuple[float, float]]] = {name: [] for name in series}
    for _ in range(rounds):
        ms: dict[str, list[float]] = {name: [] for name in series}
        for i, q in enumerate(queries):
            turn = i % len(series)
            for name in series[turn:] + series[:turn]:
                ms[name].append(timed_ms(lambda name=name, q=q: calls[name](q)))
        for name in series:
            per_round[name].append((pct(ms[name], 50), pct(ms[name], 95)))
    out: dict = {"queries": len(queries), "rounds": rounds, "load_average_after": [round(x, 2) for x in os.getloadavg()]}
    out["bare_query_embed_p50_ms"] = round(statistics.median(p50 for p50, _ in per_round["embed"]), 2)
    for mode in modes:
        ratios = [m[0] / e[0] for m, e in zip(per_round[mode], per_round["embed"])]  # paired within a round
        out[f"{mode}_p50_ms"] = round(statistics.median(p for p, _ in per_round[mode]), 2)
        out[f"{mode}_p95_ms"] = round(statistics.median(p for _, p in per_round[mode]), 2)
        out[f"{mode}_p50_vs_embed"] = round(statistics.median(ratios), 3)
        out[f"{mode}_p50_vs_embed_per_round"] = [round(r, 3) for r in ratios]
    return out


def index_figures(dataset, config, model, report: dict) -> Path:
    """Cold index against bare encoding, unchanged re-index, forced rebuild from the cache."""
    from searchtrace.retriever.index import build_index
    from searchtrace.retriever.index.parts import passage_parts

    docs = list(dataset.docs)
    texts = [d.content for d in docs]
    parts = [p for d in docs for p in passage_parts(d.title, d.text, config.dense.max_parts)] if config.dense.parts else []
    bare = bare_encode_seconds(model, texts + parts)
    start = time.perf_counter()
    path = build_index(dataset, config, model, progress=False)
    cold = time.perf_counter() - start
    start = time.perf_counter()
    build_index(dataset, config, model, progress=False)
    reuse = time.perf_counter() - start
    start = time.perf_counter()
    build_index(dataset, config, model, progress=False, force=True)
    rebuild = time.perf_counter() - start
    report["index"] = {
        "dataset": dataset.name, "docs": len(texts), "part_texts": len(parts), "bare_encode_s": round(bare, 2), "bare_docs_per_s": round(len(texts) / bare, 1),
        "cold_index_s": round(cold, 2), "cold_docs_per_s": round(len(texts) / cold, 1),
        "cold_vs_bare_throughput": round(bare / cold, 3),
        "reindex_unchanged_s": round(reuse, 3), "reindex_unchanged_pct_of_cold": round(100 * reuse / cold, 2),
        "forced_rebuild_cached_s": round(rebuild, 2), "forced_rebuild_pct_of_cold": round(100 * rebuild / cold, 2),
    }
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(REPO.parent / "shared" / "datasets"))
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--search-only", metavar="HOME",
                        help="skip the indexing figures: search the indexes built (or cached) in HOME")
    parser.add_argument("--index-dataset", default="scifact", help="dataset of the cold-index figures")
    parser.add_argument("--index-only", action="store_true", help="stop after the indexing figures")
    parser.add_argument("--rounds", type=int, default=3, help="search rounds over the queries (medians reported)")
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.retriever.data.beir import load_dataset
    from searchtrace.retriever.embedding.cache import Embedder
    from searchtrace.retriever.index import build_index, open_index
    from searchtrace.retriever.search.pipeline import Retriever

    shared = Path(args.shared)
    report: dict = {"machine": f"{platform.machine()} {os.cpu_count()} cores, {platform.python_version()}"}
    home = Path(args.search_only or tempfile.mkdtemp(prefix="searchtrace-bench-"))
    config = resolve_config(home=home, environ={})
    model = Embedder(config.home)
    model.load()

    scifact = load_dataset(shared / "scifact")
    if args.search_only:
        report["index"] = "skipped (--search-only)"
    else:
        index_figures(load_dataset(shared / args.index_dataset), config, model, report)
        if args.index_only:
            print(json.dumps(report, indent=2))
            return
    path = build_index(scifact, config, model, progress=False)

    queries = [q.text for q in scifact.queries][: args.queries]
    retriever = Retriever(open_index(path, config), model, config)
    report["search_scifact"] = interleaved(retriever, model, queries, ("fast",), args.rounds)
    retriever.index.close()

    musique = load_dataset(shared / "musique")
    path = build_index(musique, config, model, progress=False)
    retriever = Retriever(open_index(path, config), model, config)
    mq = [q.text for q in musique.queries]
    report["search_musique"] = interleaved(retriever, model, mq, ("fast", "graph"), args.rounds)
    retriever.index.close()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
