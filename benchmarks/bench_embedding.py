"""The ONNX Runtime embedder against sentence-transformers (torch); prints measured figures, asserts nothing.

Usage (the machine is shared: take the benchmark lock):
    flock /tmp/searchtrace-bench.lock python benchmarks/bench_embedding.py --home HOME \\
        [--shared ../shared/datasets] [--docs 60] [--rounds 3] [--before-src DIR --before-home DIR]

In one process, every ratio from series that take turns:

  * model load: ONNX (graph read from HOME, session, tokenizer) and torch;
  * query embedding p50: the sample's queries, one at a time, the embedders
    taking turns query by query (ONNX fp32 with the default threads and with
    one thread, torch);
  * bare encoding throughput of SciFact passages and their titles and sentences
    (the first ``--docs`` documents, as an index embeds them): chunks of 128 texts,
    the embedders taking turns chunk by chunk (ONNX fp32, ONNX int8, torch),
    and the int8 vectors' cosine to fp32;
  * warm search p50 with the query embedded inside, on datasets/sample, fast and
    graph mode, a retriever with the ONNX and one with the torch embedder on the
    same index taking turns query by query;
  * cold build of the sample index (passages and parts, a fresh embedding cache)
    against bare encoding of the same texts, one after the other;
  * with ``--quality N``, instead of all the above: int8 against fp32 on dense
    retrieval alone (nDCG@10, recall@100 of the passage vectors) for the first
    N queries of SciFact and MuSiQue over a corpus subset: every judged passage
    of those queries and the first passages of the corpus, 1,000 at most;
  * ``searchtrace search`` on the warm sample index: CPU and wall of the whole
    command (``/usr/bin/time``), the median of 3 runs; with ``--before-src`` the
    same command on that source tree (the torch version) too.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from itertools import islice
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "datasets" / "sample"
CHUNK = 128
QUERY = "harbour master of Port Vell"


def timed(fn, *args, **kwargs) -> float:
    start = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - start


def p50_ms(values: list[float]) -> float:
    return round(float(np.percentile(values, 50)) * 1000, 2)


def turns(calls: dict, items: list, rounds: int) -> dict[str, list[float]]:
    """Seconds of each call on each item, the calls taking turns at going first item by item."""
    names = list(calls)
    out: dict[str, list[float]] = {n: [] for n in names}
    for _ in range(rounds):
        for i, item in enumerate(items):
            k = i % len(names)
            for name in names[k:] + names[:k]:
                out[name].append(timed(calls[name], item))
    return out


def scifact_texts(shared: Path, docs: int) -> list[str]:
    from searchtrace.retriever.config.model import DenseConfig
    from searchtrace.retriever.index.parts import passage_parts

    out: list[str] = []
    with (shared / "scifact" / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in islice(f, docs):
            d = json.loads(line)
            title, text = d.get("title", ""), d.get("text", "")
            out += [f"{title}\n{text}" if title else text, *passage_parts(title, text, DenseConfig().max_parts)]
    return out


def cli_seconds(src: Path, home: Path, runs: int = 3) -> dict[str, object]:
    """Median user+sys CPU and wall of ``searchtrace search`` with ``src`` on the path (a warm index)."""
    cmd = ["/usr/bin/time", "-f", "%U %S %e", sys.executable, "-m", "searchtrace", "search", QUERY,
           "--dataset", str(SAMPLE), "--home", str(home), "--no-progress", "--json"]
    env = dict(os.environ, PYTHONPATH=str(src), HF_HUB_OFFLINE="1", SEARCHTRACE_OTLP="0",
               PYTHONDONTWRITEBYTECODE="1")
    # run in ``src``: ``python -m`` puts the working folder first on the path, before PYTHONPATH
    subprocess.run(cmd, env=env, cwd=src, capture_output=True, check=True)  # warm: index built, graph cached
    cpu, wall = [], []
    for _ in range(runs):
        err = subprocess.run(cmd, env=env, cwd=src, capture_output=True, text=True, check=True).stderr
        user, sys_s, elapsed = (float(x) for x in re.findall(r"^([\d.]+) ([\d.]+) ([\d.]+)$", err, re.M)[-1])
        cpu.append(user + sys_s)
        wall.append(elapsed)
    return {"cpu_s": round(statistics.median(cpu), 2), "wall_s": round(statistics.median(wall), 2),
            "cpu_all": cpu, "wall_all": wall}


def cold_build(home, sample) -> dict:
    """Bare encoding of the texts the sample index embeds, then its cold build in a fresh home (same graph)."""
    import shutil
    import tempfile

    from searchtrace.home import Home
    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.retriever.embedding.cache import OnnxEmbedder
    from searchtrace.retriever.index import build_index, read_manifest
    from searchtrace.retriever.index.parts import passage_parts

    fresh = Home(Path(tempfile.mkdtemp(prefix="searchtrace-bench-")))
    shutil.copytree(home.models, fresh.models)
    config = resolve_config(home=fresh.root, environ={})
    texts = [d.content for d in sample.docs]
    texts += [p for d in sample.docs for p in passage_parts(d.title, d.text, config.dense.max_parts)]
    bare = timed(OnnxEmbedder(home).encode_documents, texts)
    embedder = OnnxEmbedder(fresh)
    embedder.load()
    manifest = read_manifest(build_index(sample, config, embedder, progress=False))
    shutil.rmtree(fresh.root, ignore_errors=True)
    return {"texts": len(texts), "embedded_by_build": manifest.embedded_texts, "bare_encode_s": round(bare, 2),
            "build_s": round(manifest.build_seconds, 2), "ratio_bare_vs_build": round(bare / manifest.build_seconds, 3)}


def dense_quality(embedder, docs, queries, qrels) -> dict[str, float]:
    """nDCG@10 (linear gain, as trec_eval) and recall@100 of dense retrieval over ``docs``."""
    ids = [d.id for d in docs]
    doc_vectors = embedder.encode_documents([d.content for d in docs])
    query_vectors = embedder.encode_documents([q.text for q in queries])
    ndcg, recall = [], []
    for q, vector in zip(queries, query_vectors):
        ranked = [ids[i] for i in np.argsort(-(doc_vectors @ vector), kind="stable")[:100]]
        rel = {d: g for d, g in qrels.get(q.id, {}).items() if g > 0}
        dcg = sum(rel.get(d, 0) / np.log2(i + 2) for i, d in enumerate(ranked[:10]))
        ideal = sum(g / np.log2(i + 2) for i, g in enumerate(sorted(rel.values(), reverse=True)[:10]))
        ndcg.append(dcg / ideal if ideal else 0.0)
        recall.append(len(set(ranked) & set(rel)) / len(rel) if rel else 0.0)
    return {"ndcg@10": round(float(np.mean(ndcg)), 4), "recall@100": round(float(np.mean(recall)), 4)}


def quality(home, shared: Path, n: int) -> dict:
    """int8 against fp32, dense retrieval alone, on a subset of SciFact and MuSiQue (see the module doc)."""
    from searchtrace.retriever.data.beir import load_dataset
    from searchtrace.retriever.embedding.cache import OnnxEmbedder

    fp32, int8 = OnnxEmbedder(home), OnnxEmbedder(home, "int8")
    out: dict = {}
    for name in ("scifact", "musique"):
        data = load_dataset(shared / name)
        queries = [q for q in data.queries_for_split() if data.qrels.get(q.id)][:n]
        judged = {d for q in queries for d in data.qrels[q.id]}
        docs = [d for d in data.docs if d.id in judged]
        docs += [d for d in data.docs if d.id not in judged][:max(0, 1000 - len(docs))]
        out[name] = {"queries": len(queries), "passages": len(docs),
                     "fp32": dense_quality(fp32, docs, queries, data.qrels),
                     "int8": dense_quality(int8, docs, queries, data.qrels)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--home", required=True, help="searchtrace home (the ONNX graph and the sample index)")
    parser.add_argument("--shared", default=str(REPO.parent / "shared" / "datasets"))
    parser.add_argument("--docs", type=int, default=60, help="SciFact documents whose texts are encoded")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, help="the first N sample queries only (a smoke run)")
    parser.add_argument("--cli-runs", type=int, default=3)
    parser.add_argument("--cli-only", action="store_true", help="only the searchtrace search figures")
    parser.add_argument("--quality", type=int, metavar="N", help="only int8 vs fp32 dense quality on N queries")
    parser.add_argument("--before-src", help="a source tree of the torch version, for the CLI figure")
    parser.add_argument("--before-home", help="its home (the sample index built by it)")
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.retriever.data.beir import load_dataset
    from searchtrace.retriever.embedding.cache import OnnxEmbedder
    from searchtrace.retriever.embedding.torch_reference import TorchEmbedder
    from searchtrace.retriever.index import ensure_index
    from searchtrace.retriever.search.pipeline import Retriever

    config = resolve_config(home=Path(args.home), environ={})
    if args.quality:
        print(json.dumps(quality(config.home, Path(args.shared), args.quality), indent=2))
        return
    if args.cli_only:
        cli = {"onnx": cli_seconds(REPO, config.home.root, args.cli_runs)}
        if args.before_src and args.before_home:
            cli["torch_before"] = cli_seconds(Path(args.before_src), Path(args.before_home), args.cli_runs)
        print(json.dumps({"load_average": [round(x, 2) for x in os.getloadavg()], "cli_search": cli}, indent=2))
        return
    report: dict = {"cores": os.cpu_count(), "load_average_start": [round(x, 2) for x in os.getloadavg()]}
    ort, ort1, int8, torch = (OnnxEmbedder(config.home), OnnxEmbedder(config.home, threads=1),
                              OnnxEmbedder(config.home, "int8"), TorchEmbedder())
    report["load_s"] = {"onnx_fp32": round(timed(ort.load), 3), "onnx_int8": round(timed(int8.load), 3),
                        "torch": round(timed(torch.load), 3)}
    ort1.load()

    sample = load_dataset(SAMPLE)
    queries = [q.text for q in sample.queries][:args.queries]
    q = turns({"onnx": ort.encode_query, "onnx_1thread": ort1.encode_query, "torch": torch.encode_query},
              queries, args.rounds)
    report["query_p50_ms"] = {k: p50_ms(v) for k, v in q.items()}
    report["query_p50_ratio_onnx_vs_torch"] = round(report["query_p50_ms"]["onnx"] / report["query_p50_ms"]["torch"], 3)

    texts = scifact_texts(Path(args.shared), args.docs)
    chunks = [texts[i:i + CHUNK] for i in range(0, len(texts), CHUNK)]
    vectors: dict[str, list[np.ndarray]] = {"onnx": [], "int8": []}

    def keep(name, embedder):
        return lambda chunk: vectors.setdefault(name, []).append(embedder.encode_documents(chunk))

    b = turns({"onnx": keep("onnx", ort), "int8": keep("int8", int8), "torch": torch.encode_documents}, chunks, 1)
    report["encode_texts"] = len(texts)
    report["encode_texts_per_s"] = {k: round(len(texts) / sum(v), 1) for k, v in b.items()}
    report["encode_ratio_onnx_vs_torch"] = round(sum(b["torch"]) / sum(b["onnx"]), 3)
    report["encode_ratio_int8_vs_torch"] = round(sum(b["torch"]) / sum(b["int8"]), 3)
    cos = (np.concatenate(vectors["onnx"]) * np.concatenate(vectors["int8"])).sum(axis=1)
    report["int8_cosine_to_fp32"] = {"min": round(float(cos.min()), 4), "mean": round(float(cos.mean()), 4)}

    index = ensure_index(SAMPLE, config, ort, progress=False)  # fp32 vectors: one index serves both
    retrievers = {"onnx": Retriever(index, ort, config), "torch": Retriever(index, torch, config)}
    for mode in ("fast", "graph"):
        calls = {name: (lambda query, r=r, mode=mode: r.search({"query": query, "mode": mode, "top_k": 10}))
                 for name, r in retrievers.items()}
        s = turns(calls, queries, args.rounds)
        report[f"search_{mode}_p50_ms"] = {k: p50_ms(v) for k, v in s.items()}
        report[f"search_{mode}_ratio_onnx_vs_torch"] = round(
            report[f"search_{mode}_p50_ms"]["onnx"] / report[f"search_{mode}_p50_ms"]["torch"], 3)
    index.close()
    report["cold_build_sample"] = cold_build(config.home, sample)
    report["cli_search"] = {"onnx": cli_seconds(REPO, config.home.root, args.cli_runs)}
    if args.before_src and args.before_home:
        report["cli_search"]["torch_before"] = cli_seconds(Path(args.before_src), Path(args.before_home),
                                                           args.cli_runs)
    report["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
