"""Index and search benchmark on real data; prints measured figures, asserts nothing.

Usage:
    python benchmarks/bench_index_search.py [--shared ../shared/datasets] [--queries 200] [--search-only HOME]
                                            [--index-dataset scifact|musique]

Measures, in one process:
  * cold index time and docs/s (SciFact, or ``--index-dataset``) against bare
    sentence-transformers encoding of the same texts: the passages, and with
    passage parts on (the default) their titles and sentences too (target: ratio >= 0.9);
  * re-index of the unchanged corpus (content-addressed reuse), and a forced
    rebuild served by the embedding cache (target: <= 2% of cold);
  * warm search p50/p95 per mode against bare single-query embedding time
    (target: p50 <= 1.25x), on SciFact (fast) and MuSiQue (fast and graph).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def bare_encode_seconds(model, texts: list[str]) -> float:
    st = model.load()
    start = time.perf_counter()
    st.encode(texts, batch_size=64, convert_to_numpy=True, normalize_embeddings=True)
    return time.perf_counter() - start


def bare_query_ms(model, queries: list[str]) -> list[float]:
    st = model.load()
    out = []
    for q in queries:
        start = time.perf_counter()
        st.encode([q], convert_to_numpy=True, normalize_embeddings=True)
        out.append((time.perf_counter() - start) * 1000)
    return out


def search_ms(retriever, queries: list[str], mode: str) -> list[float]:
    out = []
    for q in queries:
        start = time.perf_counter()
        r = retriever.search({"query": q, "mode": mode, "top_k": 10})
        out.append((time.perf_counter() - start) * 1000)
        if "error" in r:
            raise RuntimeError(r["error"])
    return out


def index_figures(dataset, config, model, report: dict) -> Path:
    """Cold index against bare encoding, unchanged re-index, forced rebuild from the cache."""
    from retriever.index import build_index

    from retriever.parts import passage_parts

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
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    from retriever.config import RetrieverConfig
    from retriever.data.beir import load_dataset
    from retriever.embedding import Embedder
    from retriever.index import build_index, open_index
    from retriever.pipeline import Retriever

    shared = Path(args.shared)
    model = Embedder()
    model.load()
    report: dict = {"machine": f"{platform.machine()} {os.cpu_count()} cores, {platform.python_version()}"}
    home = Path(args.search_only or tempfile.mkdtemp(prefix="searchtrace-bench-"))
    config = RetrieverConfig.resolve(home=home, environ={})

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
    search_ms(retriever, queries[:20], "fast")  # warm up
    embed = bare_query_ms(model, queries)
    fast = search_ms(retriever, queries, "fast")
    report["search_scifact"] = {
        "queries": len(queries), "bare_query_embed_p50_ms": round(pct(embed, 50), 2),
        "fast_p50_ms": round(pct(fast, 50), 2), "fast_p95_ms": round(pct(fast, 95), 2),
        "fast_p50_vs_embed": round(pct(fast, 50) / pct(embed, 50), 3),
    }
    retriever.index.close()

    musique = load_dataset(shared / "musique")
    path = build_index(musique, config, model, progress=False)
    retriever = Retriever(open_index(path, config), model, config)
    mq = [q.text for q in musique.queries]
    search_ms(retriever, mq[:10], "graph")
    embed = bare_query_ms(model, mq * 2)
    out = {"queries": len(mq) * 2, "bare_query_embed_p50_ms": round(pct(embed, 50), 2)}
    for mode in ("fast", "graph"):
        ms = search_ms(retriever, mq * 2, mode)
        out[f"{mode}_p50_ms"] = round(pct(ms, 50), 2)
        out[f"{mode}_p95_ms"] = round(pct(ms, 95), 2)
        out[f"{mode}_p50_vs_embed"] = round(pct(ms, 50) / statistics.median(embed), 3)
    report["search_musique"] = out
    retriever.index.close()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
