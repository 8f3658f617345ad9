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

Then the whole command lines, each a fresh process as a user runs it:
``searchtrace eval --run RUN --qrels QRELS --metrics ... --json`` against a
pytrec_eval script (the same reader and evaluator as above, printing the means as
JSON), taking turns, median of ``--repeats`` (wall and CPU time; the two
outputs' means are checked to agree). searchtrace is byte-compiled first, as an
installed package is.

Agreement is printed as the max absolute per-query difference from ours for
each metric. ranx breaks score ties in arbitrary order (a quicksort), trec_eval
and we by document id descending, so ranx is also compared on the queries
whose run has no tied scores.

    python benchmarks/bench_metrics.py [--queries 10000 --depth 100 --repeats 5]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

from searchtrace.evals.runs.trec import read_qrels, read_run
from searchtrace.evals.scoring.metrics import evaluate

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


PYTREC_SCRIPT = """
import json, sys
from collections import defaultdict
import pytrec_eval

run, qrels = defaultdict(dict), defaultdict(dict)
with open(sys.argv[1]) as handle:
    for q, _, d, _, score, _ in map(str.split, handle):
        run[q][d] = float(score)
with open(sys.argv[2]) as handle:
    for q, _, d, grade in map(str.split, handle):
        qrels[q][d] = int(grade)
measures = sys.argv[3:]
per_query = pytrec_eval.RelevanceEvaluator(qrels, set(measures)).evaluate(run)
print(json.dumps({m: sum(v[m] for v in per_query.values()) / len(per_query) for m in measures}))
"""


def _command(argv: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds of one command, and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, done.stdout


def _compile_package() -> None:
    """Byte-compile searchtrace as an install does (with PYTHONDONTWRITEBYTECODE set, each run would compile it)."""
    import compileall

    import searchtrace

    package = Path(searchtrace.__file__).resolve().parent
    for folder in (package, *(p.resolve() for p in package.iterdir() if p.is_dir())):  # compile_dir skips links
        compileall.compile_dir(folder, quiet=1)


def command_lines(run: Path, qrels: Path, repeats: int, folder: Path) -> None:
    """Time ``searchtrace eval --run`` against a pytrec_eval script, both as fresh processes, in turns."""
    script = folder / "pytrec_eval_script.py"
    script.write_text(PYTREC_SCRIPT)
    _compile_package()
    commands = {
        "searchtrace eval --run": [sys.executable, "-m", "searchtrace", "eval", "--run", str(run), "--qrels",
                                   str(qrels), "--metrics", *METRICS, "--json"],
        "pytrec_eval script": [sys.executable, str(script), str(run), str(qrels), *PYTREC.values()],
    }
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    outputs: dict[str, str] = {}
    for _ in range(repeats):
        for name, argv in commands.items():
            wall, cpu, outputs[name] = _command(argv)
            walls[name].append(wall)
            cpus[name].append(cpu)
    ours_means = json.loads(outputs["searchtrace eval --run"])["metrics"]
    theirs = json.loads(outputs["pytrec_eval script"])
    base = statistics.median(walls["searchtrace eval --run"])
    print(f"whole command line, fresh process each, taking turns, median of {repeats}:")
    for name in commands:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        print(f"  {name:<24} wall {wall:6.2f} s  cpu {cpu:6.2f} s  {wall / base:5.2f}x ours (wall)")
    for metric, name in PYTREC.items():
        if metric in ours_means:
            print(f"  mean {metric:<13} ours {ours_means[metric]:.6f}  pytrec_eval {name} {theirs[name]:.6f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--corpus", type=int, default=200_000, help="distinct document ids")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-ranx", action="store_true", help="skip ranx (not installed, or slow JIT)")
    ap.add_argument("--only-cli", action="store_true", help="only time the command lines")
    args = ap.parse_args()
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(line_buffering=True)
    with tempfile.TemporaryDirectory() as tmp:
        run, qrels = generate(Path(tmp), args.queries, args.depth, args.corpus)
        print(f"run: {args.queries} queries x {args.depth} docs ({run.stat().st_size / 1e6:.1f} MB)")
        os.environ.setdefault("PYTHONPATH", str(Path(__file__).resolve().parents[1]))  # this checkout's searchtrace
        command_lines(run, qrels, args.repeats, Path(tmp))
        if args.only_cli:
            return
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
