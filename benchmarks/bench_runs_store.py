"""The run index on PostgreSQL: publish, find the newest run with a tag, read a run whole, a verified cache hit.

Usage:
    python benchmarks/bench_runs_store.py [--store postgresql://...] [--runs 300] [--queries 100] [--depth 100]

Without ``--store`` it starts a throwaway server as the tests do (``tests/postgres_server.py``).
One run folder of ``--queries`` x ``--depth`` scored documents is made once (``eval --run``);
``--runs`` copies of it under their own ids, dates and tags (every tenth tagged ``main``)
are published, then ``latest:tag=main`` is looked up (its query plan printed), one run is
read whole, and one is resolved through a home's cache (written, then a verified hit).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from searchtrace.evals.runs.store import RunSnapshot

REPO = Path(__file__).resolve().parents[1]


def _run_folder(root: Path, queries: int, depth: int) -> Path:
    from searchtrace.cli import main

    qrels = "".join(f"q{q} 0 d{q}_{d} {d % 3}\n" for q in range(queries) for d in range(0, depth, 7))
    run = "".join(f"q{q} Q0 d{q}_{d} {d + 1} {1.0 / (d + 1) + q * 1e-9!r} bench\n"
                  for q in range(queries) for d in range(depth))
    (root / "qrels.txt").write_text(qrels)
    (root / "in.trec").write_text(run)
    out = root / "bench-run"
    assert main(["eval", "--run", str(root / "in.trec"), "--qrels", str(root / "qrels.txt"), "--out", str(out),
                 "--json"]) == 0
    return out


def _copy(snapshot: RunSnapshot, run_id: str, created: datetime, tags: tuple[str, ...]) -> RunSnapshot:
    """The snapshot as another run: its id, date and tags, and its run.json rewritten to say so."""
    from searchtrace.evals.runs.store import RunFile

    summary = replace(snapshot.summary, run_id=run_id, created_at=created, tags=tags)
    data = json.dumps(summary.to_json(), indent=2).encode()
    files = tuple(RunFile(f.name, hashlib.sha256(data).hexdigest(), len(data), data) if f.name == "run.json" else f
                  for f in snapshot.files)
    return replace(snapshot, summary=summary, created_at=created, files=files)


def _ms(samples: list[float]) -> str:
    return f"median {statistics.median(samples) * 1e3:.2f} ms, max {max(samples) * 1e3:.2f} ms"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--store", help="an empty, migrated or new database (default: a throwaway server)")
    p.add_argument("--runs", type=int, default=300)
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--depth", type=int, default=100)
    args = p.parse_args()

    server = None
    url = args.store
    if url is None:
        sys.path.insert(0, str(REPO / "tests"))
        from postgres_server import PostgresServer, skip_reason

        if skip_reason():
            sys.exit(f"no PostgreSQL: {skip_reason()}")
        server = PostgresServer().setup()
        url = server.new_database()
    try:
        _bench(url, args)
    finally:
        if server is not None:
            server.teardown()


def _bench(url: str, args: argparse.Namespace) -> None:
    from searchtrace.cli import migrations
    from searchtrace.database import Database, StoreUrl, migrate
    from searchtrace.evals import RunFolder
    from searchtrace.evals.runs.runindex import resolve_run
    from searchtrace.evals.runs.store import PostgresRunIndex, RunSelector, read_snapshot
    from searchtrace.home import Home

    db = Database(StoreUrl(url))
    migrate(db, migrations())
    index = PostgresRunIndex(db)
    with tempfile.TemporaryDirectory() as tmp:
        base = read_snapshot(RunFolder(_run_folder(Path(tmp), args.queries, args.depth)))
        rows = len(base.rankings)
        t0 = datetime(2026, 1, 1, tzinfo=UTC)
        copies = [_copy(base, f"bench-{i:05d}", t0 + timedelta(minutes=i), ("main",) if i % 10 == 0 else ("pr",))
                  for i in range(args.runs)]
        took = []
        for snapshot in copies:
            started = time.perf_counter()
            index.publish(snapshot)
            took.append(time.perf_counter() - started)
        print(f"publish: {args.runs} runs of {rows:,} scored documents: {_ms(took)} per run "
              f"({rows / statistics.median(took):,.0f} scores/s)")
        took = []
        for _ in range(200):
            started = time.perf_counter()
            found = index.find(RunSelector(tag="main"))
            took.append(time.perf_counter() - started)
        newest = f"bench-{(args.runs - 1) // 10 * 10:05d}"
        assert found.run_id == newest, (found.run_id, newest)
        print(f"latest:tag=main among {args.runs} runs: {_ms(took)}")
        with db.connection() as conn:
            conn.execute("ANALYZE")
            plan = conn.execute("EXPLAIN SELECT run_id FROM st_run_tags WHERE tag = 'main' "
                                "ORDER BY created_at DESC, run_id DESC LIMIT 1").fetchall()
        print("  plan: " + "\n        ".join(line for (line,) in plan))
        took = []
        for i in range(0, args.runs, max(1, args.runs // 20)):
            started = time.perf_counter()
            index.snapshot(f"bench-{i:05d}")
            took.append(time.perf_counter() - started)
        print(f"read a run whole (files checked, rankings rebuilt): {_ms(took)}")
        home = Home(Path(tmp) / "home")
        store = StoreUrl(url)
        for what in ("cache written", "cache hit (verified)"):
            started = time.perf_counter()
            resolve_run("latest:tag=main", store, home)
            print(f"resolve latest:tag=main, {what}: {(time.perf_counter() - started) * 1e3:.1f} ms")
    db.close()


if __name__ == "__main__":
    main()
