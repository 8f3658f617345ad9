"""Many processes and many threads on one home: nothing fails, nothing is lost, memory stays flat.

Usage:
    python benchmarks/bench_concurrency.py [--dataset datasets/sample] [--seconds 120] [--threads 8]
        [--searches 2000] [--home DIR] [--skip-processes] [--skip-threads]

Part 1, processes (``--seconds`` of wall time, default 120): on one home, at once,
four processes search the dataset's index over and over, one runs
``searchtrace eval`` again and again, one lists traces five times a second and
one adds 5,000 old traces and prunes them, again and again, so the store's
write lock is contended throughout. Then every search's trace (the searchers'
and every eval's) is looked up in the store: each must be there with all its
spans. Target: 0 failed searches, traces stored = searches made.

Part 2, threads: one process, ``--threads`` threads sharing one Retriever, each
making ``--searches`` searches; every trace stored with its spans, and the
resident memory after the last thousand searches within 10% of after the first
thousand. Loopback only: nothing here talks to another host.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from searchtrace.retriever import Retriever
    from searchtrace.traces import TraceHandles

REPO = Path(__file__).resolve().parents[1]
STAGE_SPANS = 11  # the root and its ten stages (no feedback)

SEARCHER = textwrap.dedent("""
    import json, random, sys, time
    sys.path.insert(0, sys.argv[6])
    from bench_concurrency import traced_retriever
    from searchtrace.errors import SearchtraceError
    home, dataset, seconds, seed, out = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    retriever, handles, queries = traced_retriever(dataset, home)
    rng = random.Random(seed)
    ids, failures = [], []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            ids.append(retriever.search({"query": rng.choice(queries), "top_k": 10}).trace_id)
        except SearchtraceError as exc:
            failures.append(exc.message)
    retriever.close()
    handles.close()
    json.dump({"ids": ids, "failures": failures}, open(out, "w"))
""")


def traced_retriever(dataset: str, home: str | Path) -> tuple[Retriever, TraceHandles, list[str]]:
    """A retriever on ``dataset`` tracing to ``home``'s store, its trace handles, and the dataset's queries
    (what each searching process and the thread phase search with)."""
    from searchtrace.retriever import load_dataset, open_retriever, resolve_config
    from searchtrace.traces import TraceSettings, make_tracer_provider

    config = resolve_config(home=home, environ={})
    settings = TraceSettings.resolve(environ={})
    provider, handles = make_tracer_provider(config.home, settings)
    retriever = open_retriever(dataset, config, progress=False, tracer=provider.get_tracer("bench"),
                               capture=settings.capture, deferred=handles.deferred)
    return retriever, handles, [q.text for q in load_dataset(dataset).queries]


def _python(code: str, *args: str, log: Path) -> subprocess.Popen:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    return subprocess.Popen([sys.executable, "-c", code, *args], env=env, stdout=log.open("w"),
                            stderr=subprocess.STDOUT)


def _old_traces(n: int, start: int) -> list:
    """``n`` emulated traces dated in 2023 (what the pruner adds, then deletes)."""
    sys.path.insert(0, str(REPO / "tests"))
    from trace_fixtures import MS, T0, FakeSearch, record

    spans, _ = record(*(FakeSearch(start_ns=T0 + (start + i) * 1000 * MS, candidates=20) for i in range(n)))
    return spans


def processes(dataset: str, home: Path, seconds: float) -> dict[str, object]:
    from searchtrace.evals import RunFolder
    from searchtrace.retriever import open_retriever, resolve_config
    from searchtrace.traces import TraceFilter, TraceStore

    open_retriever(dataset, resolve_config(home=home, environ={}), progress=False).close()  # built before
    logs = home / "bench-logs"
    logs.mkdir(exist_ok=True)
    store = TraceStore(home / "traces.sqlite").open()
    start_count = store.count()
    searchers = [_python(SEARCHER, str(home), dataset, str(seconds), str(i), str(logs / f"searcher{i}.json"),
                         str(REPO / "benchmarks"),
                         log=logs / f"searcher{i}.log") for i in range(4)]
    stop = threading.Event()
    counts = {"lists": 0, "list_failures": 0, "prunes": 0, "pruned": 0, "prune_failures": 0, "evals": 0,
              "eval_failures": 0}

    def lister() -> None:
        reader = TraceStore(store.path)
        while not stop.wait(0.2):
            try:
                reader.list_traces(TraceFilter(limit=20))
                counts["lists"] += 1
            except Exception:  # noqa: BLE001 - counted: the target is none
                counts["list_failures"] += 1
        reader.close()

    def pruner() -> None:
        writer = TraceStore(store.path)
        batch = 0
        while not stop.is_set():
            try:
                writer.write(_old_traces(5000, batch * 5000))
                counts["pruned"] += writer.prune(older_than_days=365)
                counts["prunes"] += 1
            except Exception:  # noqa: BLE001
                counts["prune_failures"] += 1
            batch += 1
        writer.close()

    runs: list[Path] = []

    def evaluator() -> None:
        env = dict(os.environ, HF_HUB_OFFLINE="1", SEARCHTRACE_HOME=str(home))
        while not stop.is_set():
            out = home / "runs" / f"bench-{len(runs)}"
            done = subprocess.run([sys.executable, "-m", "searchtrace", "eval", dataset, "--out", str(out),
                                   "--no-progress", "--json"], env=env, capture_output=True, text=True)
            counts["evals" if done.returncode == 0 else "eval_failures"] += 1
            if done.returncode == 0:
                runs.append(out)

    threads = [threading.Thread(target=f) for f in (lister, pruner, evaluator)]
    load_before = os.getloadavg()
    for t in threads:
        t.start()
    for p in searchers:
        p.wait()
    stop.set()
    for t in threads:
        t.join()
    results = [json.loads((logs / f"searcher{i}.json").read_text()) for i in range(4)]
    ids = [i for r in results for i in r["ids"]]
    eval_ids = [o.trace_id for run in runs for o in RunFolder(run).outcomes() if o.trace_id]
    stored = {}
    for chunk in range(0, len(ids + eval_ids), 5000):
        stored.update(store.stored((ids + eval_ids)[chunk:chunk + 5000]))
    missing = sum(1 for i in ids + eval_ids if stored.get(i, 0) < STAGE_SPANS)
    store.close()
    return {
        "seconds": seconds, "searches": len(ids), "failed_searches": sum(len(r["failures"]) for r in results),
        "eval_runs": counts["evals"], "eval_failures": counts["eval_failures"], "eval_searches": len(eval_ids),
        "traces_checked": len(ids) + len(eval_ids), "traces_missing_or_incomplete": missing,
        "lists": counts["lists"], "list_failures": counts["list_failures"], "prune_rounds": counts["prunes"],
        "old_traces_pruned": counts["pruned"], "prune_failures": counts["prune_failures"],
        "store_traces_before": start_count, "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }


def _rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def threads(dataset: str, home: Path, n_threads: int, per_thread: int) -> dict[str, object]:
    from searchtrace.errors import SearchtraceError

    retriever, handles, queries = traced_retriever(dataset, home)
    lock = threading.Lock()
    done = [0]
    rss: dict[int, float] = {}
    ids: list[str] = []
    errors: list[str] = []

    def work(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(per_thread):
            try:
                response = retriever.search({"query": rng.choice(queries), "top_k": 10})
            except SearchtraceError as exc:
                response, error = None, exc.message
            with lock:
                if response is None:
                    errors.append(error)
                else:
                    ids.append(response.trace_id)
                done[0] += 1
                if done[0] % 1000 == 0:
                    rss[done[0]] = _rss_mib()

    started = time.perf_counter()
    workers = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    wall = time.perf_counter() - started
    retriever.close()
    handles.close()
    stored = {}
    for chunk in range(0, len(ids), 5000):
        stored.update(handles.store.stored(ids[chunk:chunk + 5000]) if handles.store else {})
    total = n_threads * per_thread
    first, last = rss[min(rss)], rss[max(rss)]
    return {
        "threads": n_threads, "searches": total, "errors": len(errors), "searches_per_s": round(total / wall, 1),
        "traces_with_all_spans": sum(1 for i in ids if stored.get(i) == STAGE_SPANS),
        "spans_stored": sum(stored.values()), "spans_expected": STAGE_SPANS * total,
        "rss_after_first_1000_mib": round(first, 1), "rss_after_last_1000_mib": round(last, 1),
        "rss_growth_pct": round(100 * (last - first) / first, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=str(REPO / "datasets" / "sample"))
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--searches", type=int, default=2000, help="searches per thread")
    parser.add_argument("--home", help="home folder (default: a new temporary one, its embedding cache empty)")
    parser.add_argument("--skip-processes", action="store_true")
    parser.add_argument("--skip-threads", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    home = Path(args.home) if args.home else Path(tempfile.mkdtemp(prefix="searchtrace-bench-concurrency-"))
    report: dict[str, object] = {"dataset": args.dataset, "home": str(home)}
    if not args.skip_processes:
        report["processes"] = processes(args.dataset, home, args.seconds)
        print(json.dumps(report["processes"], indent=2), flush=True)
    if not args.skip_threads:
        report["threads"] = threads(args.dataset, home, args.threads, args.searches)
        print(json.dumps(report["threads"], indent=2), flush=True)


if __name__ == "__main__":
    main()
