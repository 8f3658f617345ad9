"""The shared store stopped under load: no search fails, and every answered search's trace is stored after
the store is back (the buffer held them). A real ``searchtrace serve`` and a real PostgreSQL of the test's own,
stopped for 10 s while 8 clients search; loopback only, bounded in requests and in time."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import ContextManager

import httpx
import pytest
from test_serve_workers import Served, _wait_ready, serving

pytestmark = [pytest.mark.slow]

CLIENTS = 8
MOST_PER_CLIENT = 1_500
LOAD_S = 24.0
STOP_AT_S, STOPPED_S = 4.0, 10.0
BUFFER_SPANS = 100_000


def serving_shared(home: Path, store_url: str) -> ContextManager[Served]:
    """``searchtrace serve`` on the sample with its traces in the shared store, exported every 200 ms."""
    return serving(home, "--store", store_url, env={"OTEL_BSP_SCHEDULE_DELAY": "200",
                                                   "SEARCHTRACE_STORE_BUFFER": str(BUFFER_SPANS)})


def _load(url: str, outage) -> tuple[list[str], list[str], list[float]]:
    """Search from every client until ``LOAD_S`` has passed; ``outage`` runs meanwhile in its own thread.
    The answered searches' trace ids, the failures, and when each answer came (monotonic)."""
    answered: list[str] = []
    times: list[float] = []
    failed: list[str] = []
    lock = threading.Lock()
    end = time.monotonic() + LOAD_S

    def client(k: int) -> None:
        with httpx.Client(timeout=30) as session:
            for i in range(MOST_PER_CLIENT):
                if time.monotonic() > end:
                    return
                try:
                    r = session.post(f"{url}/v1/search", json={"query": f"harbour storm {k} {i}", "top_k": 3})
                except httpx.HTTPError as exc:
                    with lock:
                        failed.append(f"{type(exc).__name__}: {exc}")
                    continue
                with lock:
                    if r.status_code == 200:
                        answered.append(r.headers["x-trace-id"])
                        times.append(time.monotonic())
                    else:
                        failed.append(f"{r.status_code} {r.text}")

    threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
    stopper = threading.Thread(target=outage)
    for t in threads:
        t.start()
    stopper.start()
    for t in [*threads, stopper]:
        t.join(LOAD_S + 120)
    return answered, failed, times


def test_the_store_stopped_for_10_s_under_load_fails_no_search_and_loses_no_trace(
        sample_index_path, sample_config, stoppable_postgres):
    from searchtrace.cli import migrations
    from searchtrace.database import Database, StoreUrl, migrate
    from searchtrace.traces.postgres import PostgresTraceStore

    url = stoppable_postgres.new_database()
    db = Database(StoreUrl(url))
    migrate(db, migrations())
    stopped: list[float] = []

    def outage() -> None:
        time.sleep(STOP_AT_S)
        stopped.append(time.monotonic())
        stoppable_postgres.stop()
        time.sleep(STOPPED_S)
        stoppable_postgres.start()
        stopped.append(time.monotonic())

    with serving_shared(sample_config.home.root, url) as served:
        base = _wait_ready(served, workers=None)
        answered, failed, times = _load(base, outage)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:  # the buffer written out after the store came back
            export = httpx.get(f"{base}/v1/stats", timeout=10).json()["traceExport"]
            if export["heldSpans"] == 0:
                break
            time.sleep(0.5)
    assert len(stopped) == 2 and stopped[1] - stopped[0] >= STOPPED_S
    assert failed == [], failed[:5]
    during = sum(stopped[0] < t < stopped[1] for t in times)
    after = sum(t > stopped[1] for t in times)
    assert during >= 50 and after >= 50, f"{during} answers while the store was stopped, {after} after"
    assert export["heldSpans"] == 0 and export["droppedSpans"] == 0, export
    assert served.code == 0, served.stderr
    assert "out of reach" in served.stderr  # said once, on the log
    store = PostgresTraceStore(db)
    stored = store.stored(answered)
    assert len(stored) == len(answered), f"{len(answered) - len(stored)} of {len(answered)} answered traces missing"
    assert store.dropped() == 0
    for trace_id in answered[:: max(len(answered) // 20, 1)]:
        names = [s.name for s in store.load_trace(trace_id).spans]
        assert names.count("POST /v1/search") == 1 and names.count("search") == 1, names
    print(f"\n{len(answered)} searches answered ({during} while the store was stopped for "
          f"{stopped[1] - stopped[0]:.1f} s), {len(failed)} failed; buffer {BUFFER_SPANS:,} spans; every answered "
          "trace stored")
    db.close()
    stoppable_postgres.drop_database(url)
