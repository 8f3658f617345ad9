"""Scale benchmark: a synthetic corpus indexed and evaluated end to end; prints JSON.

Usage:
    python benchmarks/bench_scale.py --docs 100000 --queries 1000 --home DIR [--seed 7] [--no-parts]

Steps, each timed:
  1. ``synthesize`` the corpus, triples, queries and exact qrels (BEIR layout);
  2. compute SYNTHETIC dense vectors for every document, part (title, sentence) and query text
     (``pseudo_embeddings``: hashed word features, not MiniLM) and store them in
     the embedding cache under the MiniLM model id (``seed_embedding_cache``), as
     the issue allows ("dense vectors precomputed by the generator are fine");
     steps 1-2 run in a child process so their memory is not counted below;
  3. the real ``build_index`` (BM25 + Qdrant Edge upsert, dense and parts multivector
     + HNSW + graph), whose
     embedding step is then all cache hits (checked: ``embedded_texts == 0``);
  4. the real eval (``evals.run_eval.run_eval``, traced and journaled) on the
     queries, whose query vectors also come from the cache (the model is never
     loaded: checked).

Peak memory: ``ru_maxrss`` of this process (index + eval) and of the child
(synthesis + vectors), and the index build's RSS growth (peak during the build
minus RSS before it).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import resource
import time
from pathlib import Path

from searchtrace.home import Home

CHUNK = 10_000


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def maxrss_mib(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # KiB on Linux


def prepare(root: str, home: str, n_docs: int, n_queries: int, seed: int, parts: bool) -> dict:
    """Synthesize the dataset and seed the embedding cache with synthetic vectors (child process)."""
    from searchtrace.retriever.config.model import DenseConfig
    from searchtrace.retriever.data.beir import load_dataset
    from searchtrace.retriever.data.synth import pseudo_embeddings, synthesize
    from searchtrace.retriever.embedding.cache import Embedder, EmbeddingCache, cache_identity, seed_embedding_cache
    from searchtrace.retriever.index.parts import passage_parts

    out: dict = {}
    started = time.perf_counter()
    summary = synthesize(root, n_docs, seed, n_queries, progress=False)
    out["synth_s"] = round(time.perf_counter() - started, 2)
    out["synth"] = {"docs": summary.n_docs, "queries": summary.n_queries, "triples": summary.n_triples,
                    "qrels": summary.n_qrels}

    started = time.perf_counter()
    dataset = load_dataset(Path(root))
    texts = [d.content for d in dataset.docs] + [q.text for q in dataset.queries_for_split()]
    if parts:  # the passages' titles and sentences, as the default index embeds them
        texts += [p for d in dataset.docs for p in passage_parts(d.title, d.text, DenseConfig().max_parts)]
    del dataset
    stored = 0
    key = cache_identity(Embedder(Home(Path(home))))  # the default embedder's cache key
    with EmbeddingCache(Home(Path(home)).embedding_cache) as cache:
        for start in range(0, len(texts), CHUNK):
            chunk = texts[start:start + CHUNK]
            stored += seed_embedding_cache(cache, chunk, pseudo_embeddings(chunk, seed=seed), key)
    out["vectors_s"] = round(time.perf_counter() - started, 2)
    out["vectors_stored"] = stored
    out["maxrss_mib"] = round(maxrss_mib(), 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--home", required=True, help="fresh folder for the dataset, cache, index and run")
    parser.add_argument("--no-parts", action="store_true", help="index the passages alone (no title/sentence vectors)")
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    home = Path(args.home).resolve()
    root = home / "datasets" / f"synth-{args.docs}"
    report: dict = {
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}",
        "docs": args.docs, "queries": args.queries, "seed": args.seed,
        "dense_vectors": "SYNTHETIC (pseudo_embeddings: hashed word features, precomputed by the generator; "
                         "not MiniLM)",
        "load_avg_start": [round(x, 2) for x in os.getloadavg()],
    }

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        report["prepare"] = pool.apply(prepare, (str(root), str(home), args.docs, args.queries, args.seed,
                                                 not args.no_parts))

    from searchtrace.evals import EvalSettings
    from searchtrace.evals.runs.execution import run_eval
    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.retriever.data.beir import load_dataset
    from searchtrace.retriever.embedding.cache import Embedder
    from searchtrace.retriever.index import build_index

    config = resolve_config(home=home, search={"dense": {"parts": not args.no_parts}})
    embedder = Embedder(config.home)  # loads the model only if something misses the cache

    rss_before = rss_mib()
    started = time.perf_counter()
    dataset = load_dataset(root)
    load_s = time.perf_counter() - started
    path = build_index(dataset, config, embedder, progress=False)
    index_s = time.perf_counter() - started
    del dataset
    manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    report["index"] = {
        "seconds": round(index_s, 2), "load_dataset_s": round(load_s, 2),
        "docs_per_s": round(args.docs / index_s, 1),
        "embedded_texts": manifest["embedded_texts"], "triples": manifest["n_triples"], "parts": manifest["parts"],
        "rss_before_mib": round(rss_before, 1), "peak_rss_mib": round(maxrss_mib(), 1),
        "peak_growth_mib": round(maxrss_mib() - rss_before, 1),
        "rss_after_mib": round(rss_mib(), 1),
        "size_on_disk_mib": round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20, 1),
    }

    started = time.perf_counter()
    folder = run_eval(EvalSettings(dataset=str(root)), config, out=home / "runs" / "scale", embedder=embedder,
                      progress=False)
    eval_s = time.perf_counter() - started
    run = folder.summary()
    report["eval"] = {
        "seconds_incl_open": round(eval_s, 2), "run_wall_s": run.timings.wall_s,
        "queries_per_s": run.timings.queries_per_s, "evaluated_queries": run.evaluated_queries,
        "errors": run.errors, "mode": run.retriever.mode, "metrics": dict(run.metrics),
        "latency_ms_p50_p95": {k: [v.p50, v.p95] for k, v in run.latency_ms.items()
                               if k in ("total", "dense", "keyword", "graph", "fuse", "shape")},
        "model_loaded": embedder._session is not None,
        "run_folder": str(folder.path),
    }
    report["peak_rss_mib"] = {"index_and_eval_process": round(maxrss_mib(), 1),
                              "synth_and_vectors_child": report["prepare"]["maxrss_mib"]}
    report["load_avg_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
