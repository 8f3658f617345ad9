"""The trace store on PostgreSQL beside SQLite, in one run: ingest, the list at scale, serving.

1. **Ingest**: spans/s with 1, 4 and 16 writer processes at once, each writing its
   own synthetic searches (``bench_trace_store.Synth``: a ``search`` root and ten
   stage spans, 100 candidates per retriever stage) in batches of 512 spans, as the
   batch processor hands them over. The spans are built before the clock starts.
2. **The list at scale**: a page of 200, newest first, with a filter and with the
   document filter (span-level), at 100,000 and 1,000,000 traces; median of 7 warm
   runs, and PostgreSQL's query plans. The rows are generated in the database
   (PostgreSQL: ``generate_series``; SQLite: one ``executemany``) with the shapes a
   real store has (10 documents per trace out of 50,000; 70% graph searches; 1%
   errors; four sources), since writing a million searches span by span would
   take the benchmark an hour and measure the writer again.
3. **Serving**: ``searchtrace serve datasets/sample`` with its traces in the home's
   SQLite file, then in PostgreSQL, alternately three times, 4 keep-alive clients
   for ``--serve-seconds`` each; each answer waits for its trace's commit (the
   default), so the store's write path is in every request.

PostgreSQL is started by this script (Debian's package, in a temporary folder, on
a loopback port) with fsync on and ``synchronous_commit=off``: a commit survives
the server process being killed, not an OS crash, which is what the SQLite store's
``synchronous=NORMAL`` promises too. ``--store URL`` uses an existing server (a
database the script may create tables in: it must be empty).

    flock /tmp/searchtrace-bench.lock python benchmarks/bench_store.py
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_trace_store import WORDS, Synth  # noqa: E402
from postgres_server import PostgresServer  # noqa: E402

from searchtrace.cli import migrations  # noqa: E402
from searchtrace.database import Database, StoreUrl, migrate  # noqa: E402
from searchtrace.traces import TraceFilter, TraceKind, TraceStore  # noqa: E402
from searchtrace.traces.postgres import PostgresTraceStore  # noqa: E402

BATCH = 512
PAGE = 200
SAMPLE = REPO / "datasets" / "sample"


# -- databases ---------------------------------------------------------------------------


class Server:
    """Fresh databases on one PostgreSQL server (started here unless ``--store`` names one)."""

    def __init__(self, url: str | None) -> None:
        self.own = None if url else PostgresServer(durable=True).setup()
        self.admin = url or self.own.admin_url  # type: ignore[union-attr]
        self.made: list[str] = []

    def fresh(self) -> str:
        import psycopg

        name = f"bench_store_{len(self.made)}_{os.getpid()}"
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        url = urlunsplit(urlsplit(self.admin)._replace(path=f"/{name}"))
        self.made.append(url)
        migrate(Database(StoreUrl(url)), migrations())
        return url

    def close(self) -> None:
        import psycopg

        for url in self.made:
            with psycopg.connect(self.admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{urlsplit(url).path[1:]}" WITH (FORCE)')
        if self.own is not None:
            self.own.teardown()


# -- 1. ingest ---------------------------------------------------------------------------


def _writer(open_store: Callable[[], Any], seed: int, traces: int, ready: Any, go: Any) -> None:
    synth = Synth(100, seed=seed)
    spans = [s for i in range(traces) for s in synth.trace(seed * 1_000_000 + i)]
    store = open_store()
    ready.wait()
    go.wait()
    for i in range(0, len(spans), BATCH):
        store.write(spans[i:i + BATCH])


def ingest(open_store: Callable[[], Any], writers: int, traces: int) -> float:
    """Spans per second of ``writers`` processes writing ``traces`` searches between them."""
    ctx = mp.get_context("fork")
    ready, go = ctx.Barrier(writers + 1), ctx.Event()
    each = traces // writers
    procs = [ctx.Process(target=_writer, args=(open_store, w, each, ready, go)) for w in range(writers)]
    for p in procs:
        p.start()
    ready.wait()
    t = time.perf_counter()
    go.set()
    for p in procs:
        p.join()
    spent = time.perf_counter() - t
    assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
    return each * writers * 11 / spent


# -- 2. the list at scale ------------------------------------------------------------------

PG_FILL = """
INSERT INTO st_traces (trace_id, start_ns, end_ns, duration_ms, has_root, root_name, status, mode, query, query_fold,
    run_id, query_id, top_k, best_score, no_confident, degraded, bands, n_results, n_spans, source, dataset, kind,
    doc_ids)
SELECT md5(i::text), %(now)s - i * 2000000000::bigint, %(now)s - i * 2000000000::bigint + 30000000, 30 + (i %% 97),
    true, 'search', CASE WHEN i %% 100 = 0 THEN 'ERROR' ELSE 'UNSET' END, CASE WHEN i %% 10 < 7 THEN 'graph' ELSE 'fast'
    END, q, lower(q), CASE WHEN i %% 5 = 0 THEN 'run-' || (i / 5000) END, NULL, 5, 0.5, i %% 13 = 0,
    CASE WHEN i %% 33 = 0 THEN ',graph,' ELSE '' END, 1 + (i %% 7), 5, 11,
    (ARRAY['http', 'mcp', 'eval', 'cli'])[1 + i %% 4], 'scifact', 'search',
    ARRAY(SELECT DISTINCT 'doc-' || ((i::bigint * 7919 + k * 104729) %% 50000) FROM generate_series(1, 10) AS k)
FROM generate_series(1, %(n)s) AS i,
    LATERAL (SELECT (%(words)s::text[])[1 + (i * 31) %% %(w)s] || ' ' || (%(words)s::text[])[1 + (i * 17) %% %(w)s]
             || ' ' || (%(words)s::text[])[1 + (i * 7) %% %(w)s] AS q) AS words;
ANALYZE st_traces;
"""


def fill_postgres(url: str, n: int, now: int) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for statement in PG_FILL.split(";\n"):
            if statement.strip().startswith("ANALYZE"):
                conn.execute(statement)
            elif statement.strip():
                conn.execute(statement, {"n": n, "now": now, "words": WORDS, "w": len(WORDS)})


def fill_sqlite(path: Path, n: int, now: int) -> None:
    import sqlite3

    TraceStore(path).open().close()
    rows = []
    for i in range(1, n + 1):
        q = f"{WORDS[(i * 31) % len(WORDS)]} {WORDS[(i * 17) % len(WORDS)]} {WORDS[(i * 7) % len(WORDS)]}"
        start = now - i * 2_000_000_000
        rows.append((f"{i:032x}", start, start + 30_000_000, 30 + i % 97, 1, "search",
                     "ERROR" if i % 100 == 0 else "UNSET", "graph" if i % 10 < 7 else "fast", q, q.lower(),
                     f"run-{i // 5000}" if i % 5 == 0 else None, 5, 0.5, int(i % 13 == 0),
                     ",graph," if i % 33 == 0 else "", 1 + i % 7, 5, 11, ("http", "mcp", "eval", "cli")[i % 4],
                     "scifact", "search"))
    with sqlite3.connect(path) as conn:
        conn.executemany("INSERT INTO traces (trace_id, start_ns, end_ns, duration_ms, has_root, root_name, status, "
                         "mode, query, query_fold, run_id, top_k, best_score, no_confident, degraded, bands, "
                         "n_results, n_spans, source, dataset, kind) VALUES "
                         "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        conn.execute("ANALYZE")


def median_ms(fn: Callable[[], list[Any]], repeats: int = 7) -> tuple[float, list[Any]]:
    result = fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), result


LISTS: dict[str, TraceFilter] = {
    "newest 200": TraceFilter(limit=PAGE),
    "mode=fast": TraceFilter(mode="fast", limit=PAGE),
    "errors only": TraceFilter(errors=True, limit=PAGE),
    "source=mcp": TraceFilter(sources=("mcp",), limit=PAGE),
    "searches (kind)": TraceFilter(kind=TraceKind.SEARCH, limit=PAGE),
    "query text 'harbour'": TraceFilter(query_text="harbour", limit=PAGE),
    "page at offset 10,000": TraceFilter(offset=10_000, limit=PAGE),
}


def list_at_scale(server: Server, n: int, folder: Path) -> None:
    now = time.time_ns()
    url = server.fresh()
    t = time.perf_counter()
    fill_postgres(url, n, now)
    print(f"  PostgreSQL filled with {n:,} traces, 10 documents each, in {time.perf_counter() - t:.0f} s")
    path = folder / f"list-{n}.sqlite"
    t = time.perf_counter()
    fill_sqlite(path, n, now)
    print(f"  SQLite filled with {n:,} traces in {time.perf_counter() - t:.0f} s")
    pg, lite = PostgresTraceStore(Database(StoreUrl(url))).open(), TraceStore(path)
    print(f"  {'page of 200':<34} {'PostgreSQL':>11} {'SQLite':>9}  rows")
    for name, flt in LISTS.items():
        pg_ms, rows = median_ms(partial(pg.list_traces, flt))
        lite_ms, lite_rows = median_ms(partial(lite.list_traces, flt))
        assert len(rows) == len(lite_rows), (name, len(rows), len(lite_rows))
        print(f"  {name:<34} {pg_ms:>8.1f} ms {lite_ms:>6.1f} ms  {len(rows)}")
    docs = {"document doc-4242": ("doc-4242", TraceFilter(limit=PAGE)),
            "document doc-4242 + mode=fast": ("doc-4242", TraceFilter(mode="fast", limit=PAGE)),
            "document doc-4242 + errors only": ("doc-4242", TraceFilter(errors=True, limit=PAGE))}
    for name, (doc, flt) in docs.items():
        pg_ms, rows = median_ms(partial(pg.doc_traces, doc, flt))
        print(f"  {name:<34} {pg_ms:>8.1f} ms {'(scan)':>9}  {len(rows)}")
    with pg.db.connection() as conn:
        for name, query, params in (
                ("mode=fast", "SELECT trace_id FROM st_traces WHERE mode = %s ORDER BY start_ns DESC, trace_id DESC "
                              "LIMIT 200", ("fast",)),
                ("document doc-4242 + mode=fast (doc_traces: the GIN's hits, then sorted)",
                 "WITH hits AS MATERIALIZED (SELECT * FROM st_traces WHERE doc_ids @> %s) SELECT trace_id FROM hits "
                 "WHERE mode = %s ORDER BY start_ns DESC, trace_id DESC LIMIT 200", (["doc-4242"], "fast"))):
            plan = conn.execute(f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) {query}", params).fetchall()
            print(f"  plan, {name}:")
            for (line,) in plan:
                print(f"    {line[:110]}")
    lite.close()


# -- 3. serving ------------------------------------------------------------------------------


def _env(store: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SEARCHTRACE_STORE"}
    env.update({"HF_HUB_OFFLINE": "1", "SEARCHTRACE_OTLP": "0", "PYTHONPATH": str(REPO)})
    if store:
        env["SEARCHTRACE_STORE"] = store
    return env


def _cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds of the processes ``pids`` so far (Linux ``/proc``)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def _postgres_pids() -> list[int]:
    """Every PostgreSQL server process on this machine (the benchmark's own server: nothing else runs one)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/comm"):
        try:
            if stat.read_text().strip() == "postgres":
                out.append(int(stat.parent.name))
        except OSError:
            continue
    return out


def serve_round(home: Path, store: str | None, clients: int, seconds: float) -> tuple[float, int, float, float]:
    """Requests per second of ``clients`` closed-loop clients, the errors, and CPU ms per request of the server
    process and of PostgreSQL's processes."""
    proc = subprocess.Popen([sys.executable, "-m", "searchtrace", "serve", str(SAMPLE), "--home", str(home),
                             "--port", "0", "--no-progress"], env=_env(store), stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    assert proc.stderr is not None
    threading.Thread(target=lambda: lines.extend(iter(proc.stderr.readline, "")), daemon=True).start()  # type: ignore
    port = None
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        found = re.search(r"http://127\.0\.0\.1:(\d+)", "".join(lines))
        if found:
            port = int(found.group(1))
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                c.request("GET", "/readyz")
                if c.getresponse().status == 200:
                    break
            except OSError:
                pass
        time.sleep(0.2)
    assert port is not None, "".join(lines)
    done, errors = [0] * clients, [0] * clients
    end = time.monotonic() + seconds

    def client(k: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        rng = random.Random(k)
        while time.monotonic() < end:
            body = json.dumps({"query": " ".join(rng.choices(WORDS, k=3)), "top_k": 5})
            conn.request("POST", "/v1/search", body, {"Content-Type": "application/json"})
            r = conn.getresponse()
            r.read()
            if r.status == 200:
                done[k] += 1
            else:
                errors[k] += 1

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    postgres = _postgres_pids()
    server0, pg0 = _cpu_s([proc.pid]), _cpu_s(postgres)
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    rate = sum(done) / (time.perf_counter() - t)
    n = max(sum(done), 1)
    server_ms, pg_ms = (_cpu_s([proc.pid]) - server0) * 1000 / n, (_cpu_s(postgres) - pg0) * 1000 / n
    proc.send_signal(signal.SIGTERM)
    proc.wait(60)
    return rate, sum(errors), server_ms, pg_ms


def serving(server: Server, clients: int, seconds: float, rounds: int) -> None:
    home = Path(tempfile.mkdtemp(prefix="bench-store-serve-"))
    subprocess.run([sys.executable, "-m", "searchtrace", "index", str(SAMPLE), "--home", str(home), "--no-progress"],
                   env=_env(None), check=True, capture_output=True)
    url = server.fresh()
    ratios = []
    print(f"  {clients} clients, {seconds:.0f} s per phase; requests/s (errors); CPU ms per request of the server "
          "process, and of PostgreSQL's")
    cpu: list[tuple[float, float, float]] = []
    for r in range(rounds):
        lite, lite_err, lite_cpu, _ = serve_round(home, None, clients, seconds)
        pg, pg_err, pg_cpu, pg_server = serve_round(home, url, clients, seconds)
        ratios.append(pg / lite)
        cpu.append((lite_cpu, pg_cpu, pg_server))
        print(f"  round {r + 1}: SQLite {lite:6.1f} ({lite_err}) {lite_cpu:.2f} ms   PostgreSQL {pg:6.1f} ({pg_err}) "
              f"{pg_cpu:.2f} + {pg_server:.2f} ms   ratio {pg / lite:.3f}")
    print(f"  PostgreSQL / SQLite throughput: median ratio {statistics.median(ratios):.3f} "
          f"(range {min(ratios):.3f}-{max(ratios):.3f})")
    lite_cpu, pg_cpu, pg_server = (statistics.median(c[i] for c in cpu) for i in range(3))
    print(f"  CPU per request (medians): the server {lite_cpu:.2f} ms on SQLite, {pg_cpu:.2f} ms on PostgreSQL "
          f"(ratio {lite_cpu / pg_cpu:.3f}); PostgreSQL's own {pg_server:.2f} ms on the same two cores")


def _pg_store(url: str) -> PostgresTraceStore:
    return PostgresTraceStore(Database(StoreUrl(url)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", help="an existing PostgreSQL server's URL (default: start one here)")
    ap.add_argument("--writers", default="1,4,16")
    ap.add_argument("--ingest-traces", type=int, default=3_200, help="searches written per ingest phase")
    ap.add_argument("--traces", default="100000,1000000", help="store sizes for the list")
    ap.add_argument("--serve-seconds", type=float, default=20)
    ap.add_argument("--serve-rounds", type=int, default=3)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--skip", default="", help="parts to skip: ingest,list,serve")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    server = Server(args.store)
    folder = Path(tempfile.mkdtemp(prefix="bench-store-"))
    try:
        if "ingest" not in skip:
            print(f"1. ingest: spans/s, {args.ingest_traces:,} searches ({args.ingest_traces * 11:,} spans) per phase")
            for writers in map(int, args.writers.split(",")):
                url = server.fresh()
                path = folder / f"ingest-{writers}.sqlite"
                TraceStore(path).open().close()
                lite = ingest(partial(TraceStore, path), writers, args.ingest_traces)
                pg = ingest(partial(_pg_store, url), writers, args.ingest_traces)
                print(f"  {writers:>2} writers: SQLite {lite:>9,.0f}   PostgreSQL {pg:>9,.0f}   ratio {pg / lite:.2f}")
        if "list" not in skip:
            for n in map(int, args.traces.split(",")):
                print(f"2. the list, a page of 200 at {n:,} traces (median of 7, warm)")
                list_at_scale(server, n, folder)
        if "serve" not in skip:
            print("3. serving the sample, answers waiting for their traces' commit")
            serving(server, args.clients, args.serve_seconds, args.serve_rounds)
    finally:
        server.close()


if __name__ == "__main__":
    main()
