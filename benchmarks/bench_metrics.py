"""End-to-end scoring time of a TREC run: ours vs pytrec_eval vs ranx.

Generates (seeded) a run of ``--queries`` x ``--depth`` documents with score
ties and graded qrels (every query has a relevant document, so all three tools
score the same query set), then times parse + ndcg@10, map@100, mrr@10,
recall@100, precision@10 for each tool, warm: one untimed call first (ranx
JIT-compiles there), then the median of ``--repeats`` calls. The tools take
turns within each repeat so background load hits them alike.

* ours: ``evals.trec.read_run/read_qrels`` + ``evals.metrics.evaluate``.
* pytrec_eval: its C evaluator needs ``{qid: {docid: score}}`` dicts; it is
  timed with the fastest plain-Python reader we measured (``_run_dict``:
  ``map(str.split, file)`` into a defaultdict; whole-file ``split()`` was 3x
  slower) plus building the ``RelevanceEvaluator``. pytrec_eval has no cut reciprocal rank, so it
  computes ``recip_rank`` (full depth), checked against our ``mrr``.
* ranx: ``Qrels.from_file`` / ``Run.from_file`` (``kind="trec"``) + ``evaluate``.

Agreement is printed as the max absolute per-query difference from ours for
each metric. ranx breaks score ties in arbitrary order (a quicksort), trec_eval
and we by document id descending, so ranx is also compared on the queries
whose run has no tied scores.

    python benchmarks/bench_metrics.py [--queries 10000 --depth 100 --repeats 5]
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

from searchtrace.evals.metrics import evaluate
from searchtrace.evals.trec import read_qrels, read_run

METRICS = ("ndcg@10", "map@100", "mrr@10", "recall@100", "precision@10")
PYTREC = {"ndcg@10": "ndcg_cut_10", "map@100": "map_cut_100", "mrr": "recip_rank", "recall@100": "recall_100",
          "precision@10": "P_10"}


def generate(folder: Path, n_queries: int, depth: int, corpus: int, seed: int = 0) -> tuple[Path, Path]:
    """Write ``run.trec`` and ``qrels.trec``: 3-decimal scores (ties), grades 0-3."""
    rng = np.random.default_rng(seed)
    # Distinct ids per query: a random start plus strictly increasing gaps summing below ``corpus``.
    gaps = rng.integers(1, corpus // depth, (n_queries, depth))
    docs = (rng.integers(0, corpus, (n_queries, 1)) + np.cumsum(gaps, axis=1)) % corpus
    scores = np.round(rng.random((n_queries, depth)), 3)
    order = np.argsort(-scores, axis=1, kind="stable")  # ties stay in random doc order
    docs, scores = np.take_along_axis(docs, order, 1), np.take_along_axis(scores, order, 1)
    q = np.repeat(np.arange(n_queries), depth)
    ranks = np.tile(np.arange(1, depth + 1), n_queries)
    run = folder / "run.trec"
    run.write_text(
        "".join(
            f"q{a} Q0 d{b} {r} {s:.3f} bench\n"
            for a, b, r, s in zip(q.tolist(), docs.ravel().tolist(), ranks.tolist(), scores.ravel().tolist())
        )
    )
    lines = []
    for i in range(n_queries):
        judged = np.unique(np.r_[rng.choice(docs[i], 8, replace=False), rng.integers(0, corpus, 4)])
        grades = rng.integers(0, 4, len(judged))
        grades[0] = max(grades[0], 1)
        lines += [f"q{i} 0 d{d} {g}\n" for d, g in zip(judged.tolist(), grades.tolist())]
    qrels = folder / "qrels.trec"
    qrels.write_text("".join(lines))
    return run, qrels


def _run_dict(path: Path) -> dict[str, dict[str, float]]:
    """Plain-Python TREC run reader for pytrec_eval (the fastest variant we measured)."""
    run: defaultdict[str, dict[str, float]] = defaultdict(dict)
    with path.open() as handle:
        for q, _, d, _, score, _ in map(str.split, handle):
            run[q][d] = float(score)
    return run


def _qrels_dict(path: Path) -> dict[str, dict[str, int]]:
    qrels: defaultdict[str, dict[str, int]] = defaultdict(dict)
    with path.open() as handle:
        for q, _, d, grade in map(str.split, handle):
            qrels[q][d] = int(grade)
    return qrels


def ours(run: Path, qrels: Path) -> dict[str, np.ndarray]:
    ev = evaluate(read_qrels(qrels), read_run(run), METRICS)
    return {str(m): ev.per_query[m] for m in ev.metrics} | {"_ids": ev.query_ids}


def pytrec(run: Path, qrels: Path) -> dict[str, dict[str, float]]:
    import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator(_qrels_dict(qrels), set(PYTREC.values()))
    return evaluator.evaluate(_run_dict(run))


def ranx(run: Path, qrels: Path) -> dict[str, dict[str, float]]:
    from ranx import Qrels, Run
    from ranx import evaluate as ranx_evaluate

    q, r = Qrels.from_file(str(qrels), kind="trec"), Run.from_file(str(run), kind="trec")
    ranx_evaluate(q, r, list(METRICS), return_mean=False)
    return r.scores


def _tied_queries(run: Path) -> set[str]:
    r = read_run(run)
    same = (r.query_index[1:] == r.query_index[:-1]) & (r.scores[1:] == r.scores[:-1])
    return set(r.queries[np.unique(r.query_index[1:][same])].tolist())


def _time(tools: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    for fn in tools.values():
        fn()  # warm-up: imports, ranx's numba JIT
    times: dict[str, list[float]] = {name: [] for name in tools}
    for _ in range(repeats):
        for name, fn in tools.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


def _agreement(run: Path, qrels: Path, with_ranx: bool) -> None:
    mine = ours(run, qrels)
    ids = mine["_ids"].tolist()
    full = evaluate(read_qrels(qrels), read_run(run), ["mrr"]).per_query
    mine["mrr"] = next(iter(full.values()))
    theirs = pytrec(run, qrels)
    print("max |ours - pytrec_eval| per query:")
    for metric, name in PYTREC.items():
        diff = np.abs(mine[metric] - np.array([theirs[q][name] for q in ids]))
        print(f"  {metric:<13} vs {name:<12} {diff.max():.3g}")
    if not with_ranx:
        return
    scores = ranx(run, qrels)
    tied = _tied_queries(run)
    untied = np.array([q not in tied for q in ids])
    print(f"max |ours - ranx| per query (all {len(ids)} queries / {untied.sum()} without score ties):")
    for metric in METRICS:
        diff = np.abs(mine[metric] - np.array([scores[metric][q] for q in ids]))
        print(f"  {metric:<13} {diff.max():.3g} / {diff[untied].max() if untied.any() else float('nan'):.3g}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--corpus", type=int, default=200_000, help="distinct document ids")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-ranx", action="store_true", help="skip ranx (not installed, or slow JIT)")
    args = ap.parse_args()
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(line_buffering=True)
    with tempfile.TemporaryDirectory() as tmp:
        run, qrels = generate(Path(tmp), args.queries, args.depth, args.corpus)
        print(f"run: {args.queries} queries x {args.depth} docs ({run.stat().st_size / 1e6:.1f} MB)")
        tools: dict[str, Callable[[], object]] = {
            "ours": lambda: ours(run, qrels),
            "pytrec_eval": lambda: pytrec(run, qrels),
        }
        if not args.no_ranx:
            tools["ranx"] = lambda: ranx(run, qrels)
        times = _time(tools, args.repeats)
        base = statistics.median(times["ours"])
        print(f"warm end-to-end (parse + {', '.join(METRICS)}), median of {args.repeats}:")
        for name, values in times.items():
            med = statistics.median(values)
            print(f"  {name:<12} {med * 1000:8.1f} ms  (min {min(values) * 1000:.1f})  {med / base:5.2f}x ours")
        _agreement(run, qrels, not args.no_ranx)


if __name__ == "__main__":
    main()
