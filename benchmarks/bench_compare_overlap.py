"""``searchtrace compare --no-labels`` of two runs of 10,000 queries x 100 results.

Synthesizes (seeded) a query set drawn from traffic (``queryset.json`` and
``queries.jsonl`` whose queries carry ``count`` and ``inclusion_probability``,
so the traffic weights are read too) and two complete run folders of it,
written through the run-folder API: ``run.trec``, ``per_query.parquet`` (best
band, total latency, trace id), ``journal.jsonl`` and ``run.json`` (the summary
of ``.ci/baseline`` with this dataset, no labels). The base ranks 100 documents
per query out of a corpus of ``--corpus``, scores rounded to 3 decimals (ties);
the candidate keeps each query's ranking with neighbours swapped, a fifth of its
documents replaced and 5% of its queries cut to 30-99 results (uneven lengths).

Then times :func:`searchtrace.evals.compare_overlap` in process (both folders
read and everything computed: RBO at p = 0.9 and 0.98, Jaccard@10, new in top
10, bands, latency, weights), best and median of ``--repeats`` with the CPU time
it took (on a shared machine the wall time depends on the neighbours' load; the
CPU time much less), and the command three times as a user runs it (a new process
each, text output). Prints measured figures only.

    python benchmarks/bench_compare_overlap.py [--queries 10000 --depth 100 --repeats 5] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
BASELINE = REPO / ".ci" / "baseline"


def query_set(folder: Path, ids: list[str], rng: np.random.Generator) -> None:
    """A query-set folder: every query with its count and inclusion probability (frequency sampling)."""
    from searchtrace.evals import QueryOrigin, QuerySetInfo

    folder.mkdir(parents=True)
    counts = rng.zipf(1.5, len(ids)).clip(1, 10_000)
    probability = np.minimum(1.0, counts / counts.mean() * 0.3)
    with (folder / "queries.jsonl").open("w", encoding="utf-8") as out:
        for q, c, p in zip(ids, counts.tolist(), probability.tolist()):
            origin = QueryOrigin(c, p, (f"{abs(hash(q)):032x}"[:32],))
            out.write(json.dumps({"_id": q, "text": f"query {q}", "metadata": origin.to_json()}) + "\n")
    info = QuerySetInfo(dataset=str(folder), dataset_name="bench", filters={}, sampling="frequency", n=len(ids),
                        seed=0, searches=int(counts.sum()), uncaptured=0, distinct=len(ids), queries=len(ids),
                        created_at="2026-01-01T00:00:00+00:00")
    (folder / "queryset.json").write_text(json.dumps(info.to_json()), encoding="utf-8")


def rankings(n_queries: int, depth: int, corpus: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(n_queries, depth) documents (distinct per query) and scores (descending, 3 decimals: ties)."""
    docs = np.stack([rng.choice(corpus, depth, replace=False) for _ in range(n_queries)])
    scores = np.round(np.sort(rng.random((n_queries, depth)), axis=1)[:, ::-1] * 10, 3)
    return docs, scores


def perturbed(docs: np.ndarray, corpus: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The candidate: neighbours swapped, a fifth of the documents replaced, 5% of the queries cut short."""
    out = docs.copy()
    swap = np.arange(0, out.size - 1, 2)  # disjoint neighbours: (0, 1), (2, 3), ...
    swap = swap[(rng.random(len(swap)) < 0.5) & ((swap + 1) % docs.shape[1] != 0)]  # within a query
    flat = out.reshape(-1)
    flat[swap], flat[swap + 1] = flat[swap + 1], flat[swap].copy()
    for i in np.flatnonzero(rng.random(len(out)) < 0.2):  # replaced docs: new to the query
        fresh = rng.choice(corpus, docs.shape[1] // 5, replace=False) + corpus  # outside the base's range
        where = rng.choice(docs.shape[1], len(fresh), replace=False)
        out[i, where] = fresh
    lengths = np.full(len(out), docs.shape[1])
    short = rng.random(len(out)) < 0.05
    lengths[short] = rng.integers(30, docs.shape[1], short.sum())
    return out, lengths


def write_folder(path: Path, dataset: Path, ids: list[str], docs: np.ndarray, scores: np.ndarray,
                 lengths: np.ndarray, rng: np.random.Generator) -> None:
    from searchtrace.evals import QueryOutcome, RunFolder
    from searchtrace.evals.runs.runfolder import BANDS, RESULT_COLUMNS, TRACE_ID, latency_column
    from searchtrace.evals.scoring.rankings import Run

    template = RunFolder(BASELINE).summary()
    folder = RunFolder(path)
    settings = replace(template.settings, dataset=str(dataset), split=None)
    folder.create(settings)
    keep = np.arange(docs.shape[1])[None, :] < lengths[:, None]
    rows = np.repeat(np.arange(len(ids)), lengths)
    run = Run.from_arrays(np.asarray(ids, dtype=object)[rows].tolist(), [f"doc-{d}" for d in docs[keep].tolist()],
                          scores[keep].tolist())
    folder.write_run_file(run, tag=path.name)
    traces = [f"{x:032x}" for x in rng.integers(0, 2**62, len(ids)).tolist()]
    bands = rng.choice(["high,medium,low", "medium,low,low", "low,low,low", ""], len(ids), p=[0.3, 0.4, 0.25, 0.05])
    latency = rng.lognormal(np.log(20), 0.4, len(ids))
    per_query = pd.DataFrame({"query_id": ids, "category": "", "bestScore": rng.random(len(ids)), BANDS: bands,
                              "noConfidentResults": bands == "", "error": None, TRACE_ID: traces,
                              latency_column("total"): latency})
    folder.write_tables(per_query, pd.DataFrame(columns=list(RESULT_COLUMNS)))
    folder.append([QueryOutcome(query_id=q, category="", latency_ms={"total": float(ms)}, trace_id=t)
                   for q, t, ms in zip(ids, traces, latency.tolist())])
    info = replace(template.dataset, name="bench", path=str(dataset), split=None, queries=len(ids))
    folder.write_summary(replace(template, run_id=path.name, dataset=info, settings=settings,
                                 metrics={m: None for m in template.metrics}, evaluated_queries=0,
                                 name=path.name, scored_depth=int(lengths.max())))


def build(root: Path, n_queries: int, depth: int, corpus: int) -> tuple[Path, Path]:
    rng = np.random.default_rng(26)
    ids = [f"q{i:05d}" for i in range(n_queries)]
    dataset = root / "traffic-set"
    query_set(dataset, ids, rng)
    docs, scores = rankings(n_queries, depth, corpus, rng)
    cand_docs, cand_lengths = perturbed(docs, corpus, rng)
    write_folder(root / "base", dataset, ids, docs, scores, np.full(n_queries, depth), rng)
    write_folder(root / "candidate", dataset, ids, cand_docs, scores, cand_lengths, rng)
    return root / "base", root / "candidate"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--corpus", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dir", help="build the run folders here and keep them (default: a temporary folder)")
    args = parser.parse_args()

    from searchtrace.evals import compare_overlap

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.dir) if args.dir else Path(tmp)
        started = time.perf_counter()
        built = (root / "base" / "run.json").is_file() and (root / "candidate" / "run.json").is_file()
        base, candidate = (root / "base", root / "candidate") if built else build(root, args.queries, args.depth,
                                                                                  args.corpus)
        size = sum(f.stat().st_size for f in base.iterdir()) / 2**20
        print(f"built two run folders of {args.queries:,} queries x {args.depth} in "
              f"{time.perf_counter() - started:.1f} s (base: {size:.0f} MiB)")
        times, cpu = [], []
        for _ in range(args.repeats):
            t, c = time.perf_counter(), time.process_time()
            comparison = compare_overlap(base, candidate)
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        mean = comparison.means()
        weighted = comparison.weighted_means()
        assert weighted is not None and comparison.shared == args.queries
        print(f"in process: best {min(times) * 1000:.0f} ms, median {statistics.median(times) * 1000:.0f} ms "
              f"of {args.repeats} (CPU time, both threads: best {min(cpu) * 1000:.0f} ms)")
        print(f"mean RBO p=0.9 {mean.rbo[0].ext:.4f} (traffic-weighted {weighted.rbo[0].ext:.4f}), "
              f"p=0.98 {mean.rbo[1].ext:.4f}; Jaccard@10 {mean.jaccard:.4f}")
        env = {**os.environ, "COLUMNS": "80"}
        runs = []
        for _ in range(3):  # the first new process after the folders were written, then two more
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "searchtrace", "compare", str(base), str(candidate),
                                   "--no-labels"], capture_output=True, text=True, env=env, check=True)
            wall = time.perf_counter() - t
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            runs.append((wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime))
        print("command line (a new process each, text output, "
              f"{len(done.stdout.splitlines())} lines): "
              + ", ".join(f"{w * 1000:.0f} ms wall / {c * 1000:.0f} ms CPU" for w, c in runs))
        print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
