"""The Judge page's next pair with 100,000 judgments in the store.

Copies ``datasets/sample`` to a temporary folder, pools every (query, document) pair
of it (142 x 216 = 30,672 pairs, query by query) and fills ``judgments.jsonl`` with
``--judgments`` judgments by five judges in one append, on the pool's first 24,000 pairs
(111 queries): each judge works down them from their own start, round and round (about
four labels a pair, a judge's later ones superseding), with a retraction and a re-grade
every 50th, and notes on a tenth. Then, as the page does for a judge ``ana``
on a query she has not started:

- cold: a new session's first ``next_pair`` (the whole store read and tallied once);
- a click: ``record`` (append, fsync, free the hold) then ``next_pair`` of the query's pairs;
- a rerun's data access: ``next_pair`` (the pair held comes back), the pool as a queue,
  progress over the pool, and the pair as shown (query text, document, highlighting);
- baseline: what ``next_pair`` did before its tally, ``standing(store.read())``.

With ``--apptest``, also the page itself in Streamlit's AppTest: a grade button's click
and the script's whole rerun (no browser). Prints measured figures only.

    python benchmarks/bench_judge_page.py --judgments 100000 --clicks 50 --apptest
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from searchtrace.dashboard.data import pair_view, progress, queue
from searchtrace.evals.labels.judgments import JudgingFolder, JudgingSession, Judgment, PooledPair, standing
from searchtrace.evals.labels.judgments.pool import Pool, write_pool

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "datasets" / "sample"
T = TypeVar("T")
JUDGES = ("bo", "cy", "di", "ed", "fa")
JUDGED = 24_000  # pairs of the pool judged before the benchmark


def ids(dataset: Path, name: str) -> list[str]:
    return [json.loads(line)["_id"] for line in (dataset / name).read_text().splitlines() if line.strip()]


def fill(dataset: Path, judgments: int) -> tuple[list[tuple[str, str]], int]:
    """Write the pool and the store; returns the pool and the index of the first query ana has not started."""
    pool = [(q, d) for q in ids(dataset, "queries.jsonl") for d in ids(dataset, "corpus.jsonl")]
    write_pool(JudgingFolder.at(dataset), Pool(tuple(PooledPair(q, d, ()) for q, d in pool), 0, (), 10))
    rows: list[Judgment] = []
    i = 0
    while len(rows) < judgments:
        judge = JUDGES[i % len(JUDGES)]
        pair = pool[(i // len(JUDGES) + JUDGES.index(judge) * JUDGED // 5) % JUDGED]
        rows.append(Judgment(*pair, i % 3, judge, note="checked twice" if i % 10 == 0 else None))
        if i % 50 == 0:
            rows += [Judgment(*pair, None, judge), Judgment(*pair, (i + 1) % 3, judge)]
        i += 1
    JudgingSession.open(dataset).store.append(rows[:judgments])
    return pool, 120


def ms(values: list[float]) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]
    return f"median {statistics.median(values) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms"


def timed(fn: Callable[..., T], *args: Any, **kw: Any) -> tuple[float, T]:
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return time.perf_counter() - t0, out


def bench_session(dataset: Path, pool: list[tuple[str, str]], start: int, clicks: int) -> None:
    queries = ids(dataset, "queries.jsonl")
    query = queries[start]
    mine = [p for p in pool if p[0] == query]
    cold, pair = timed(lambda: JudgingSession.open(dataset).next_pair("ana", mine))
    session = JudgingSession.open(dataset)
    session.next_pair("ana", mine)
    base = [timed(lambda: standing(session.store.read()))[0] for _ in range(3)]
    print(f"store: {len(session.store.read()):,} judgments, {os.path.getsize(session.store.location) / 2**20:.1f} MiB;"
          f" pool {len(pool):,} pairs")
    print(f"cold: a new session's first next_pair: {cold * 1000:.0f} ms")
    print(f"baseline, the whole store read and made standing (next_pair before the tally): {ms(base)}")
    click, rerun = [], []
    for i in range(clicks):
        assert pair is not None
        t0 = time.perf_counter()
        session.record(*pair, i % 3, "ana")
        pair = session.next_pair("ana", mine)
        click.append(time.perf_counter() - t0)
        rerun.append(timed(page_data, session, dataset, mine, query)[0])
    print(f"a click, record + next_pair: {ms(click)}")
    print(f"a rerun's data access (next_pair, queue, progress over the pool, the pair shown): {ms(rerun)}")


def page_data(session: JudgingSession, dataset: Path, mine: list[tuple[str, str]], query: str) -> None:
    pair = session.next_pair("ana", mine)
    progress(session.tally, queue(dataset), "ana", 1, query)
    if pair is not None:
        pair_view(dataset, pair)


def bench_apptest(dataset: Path, clicks: int) -> None:
    from streamlit.testing.v1 import AppTest

    home = dataset.parent / "home"
    home.mkdir(exist_ok=True)
    os.environ["SEARCHTRACE_HOME"] = str(home)
    at = AppTest.from_file(str(REPO / "dashboard" / "app.py"), default_timeout=120).run()
    at.switch_page("views/judge.py").run()
    at.text_input(key="judge-dataset-path").input(str(dataset)).run()
    at.text_input(key="judge-name-input").input("gil").run()
    first, _ = timed(lambda: at.button(key="judge-name-start").click().run())
    times = [timed(lambda: at.button(key="judge-grade-1").click().run())[0] for _ in range(clicks)]
    assert not at.exception, [e.message for e in at.exception]
    print(f"AppTest: the first pair shown after the name (cold session) {first * 1000:.0f} ms; "
          f"a grade click to the next pair shown: {ms(times)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judgments", type=int, default=100_000)
    parser.add_argument("--clicks", type=int, default=50)
    parser.add_argument("--apptest", action="store_true", help="also time the page in Streamlit's AppTest")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-judge-") as tmp:
        dataset = Path(tmp) / "mine"
        shutil.copytree(SAMPLE, dataset, ignore=shutil.ignore_patterns("judgments.jsonl", "pool.jsonl"))
        t, (pool, start) = timed(fill, dataset, args.judgments)
        print(f"filled in {t:.1f} s (python {sys.version.split()[0]}, load average "
              f"{' '.join(f'{x:.1f}' for x in os.getloadavg())})")
        bench_session(dataset, pool, start, args.clicks)
        if args.apptest:
            bench_apptest(dataset, args.clicks)


if __name__ == "__main__":
    main()
