"""The shared store down, the server killed: its held traces survive (issue 35: 754 answered searches lost their
traces, counted nowhere). A real ``searchtrace serve`` on a real PostgreSQL of the test's own: the store is
stopped, searches are answered (their spans held, and spilled to the home), the server is killed with SIGKILL,
the store is started, and a server started again from the same home writes every answered trace. Loopback only;
one server at a time; bounded in requests and in time."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import httpx
from test_serve_workers import _wait_ready, serving

SEARCHES = 12


def _spilled_roots(folder: Path) -> set[str]:
    """The trace ids whose server span (the trace's root, its last span to end) is in a spill file."""
    found: set[str] = set()
    for path in folder.glob("*/*.jsonl"):
        for line in path.read_bytes().split(b"\n"):
            parts = line.split(b" ", 3)
            if len(parts) == 4 and parts[0] == b"H":
                try:
                    spans = json.loads(parts[3])
                except ValueError:
                    continue  # a line being written
                found.update(s["trace"] for s in spans if s["parent"] is None)
    return found


def test_held_traces_of_a_server_killed_while_the_store_is_down_are_stored_after_restart(
        sample_index_path, sample_config, stoppable_postgres, capsys):
    from searchtrace.cli import main, migrations
    from searchtrace.database import Database, StoreUrl, migrate
    from searchtrace.traces.store.postgres import PostgresTraceStore

    url = stoppable_postgres.new_database()
    db = Database(StoreUrl(url))
    migrate(db, migrations())
    home = sample_config.home.root
    spill = home / "traces.spill"
    env = {"OTEL_BSP_SCHEDULE_DELAY": "200"}
    stoppable_postgres.stop()
    try:
        with serving(home, "--store", url, env=env) as served:
            base = _wait_ready(served, workers=None)
            answered = []
            for i in range(SEARCHES):
                r = httpx.post(f"{base}/v1/search", json={"query": f"harbour storm {i}", "top_k": 3}, timeout=30)
                assert r.status_code == 200, r.text
                answered.append(r.headers["x-trace-id"])
            deadline = time.monotonic() + 30
            while not set(answered) <= _spilled_roots(spill) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert set(answered) <= _spilled_roots(spill), "not every answered trace was spilled"
            held = httpx.get(f"{base}/v1/stats", timeout=10).json()["traceExport"]["heldSpans"]
            served.process.send_signal(signal.SIGKILL)
            assert served.process.wait(30) == -signal.SIGKILL
    finally:
        stoppable_postgres.start()
    assert held >= SEARCHES * 2

    store = PostgresTraceStore(db)
    assert store.stored(answered) == {}  # nothing reached the store before the kill
    with serving(home, "--store", url, env=env) as served:
        _wait_ready(served, workers=None)
        deadline = time.monotonic() + 60
        while len(store.stored(answered)) < len(answered) and time.monotonic() < deadline:
            time.sleep(0.2)
    stored = store.stored(answered)
    assert set(stored) == set(answered), f"{len(answered) - len(stored)} of {len(answered)} traces missing"
    assert sum(stored.values()) <= held  # every answered trace whole; the held spans were at least those
    for trace_id in answered[:3]:
        names = [s.name for s in store.load_trace(trace_id).spans]
        assert names.count("POST /v1/search") == 1 and names.count("search") == 1, names
    assert served.code == 0, served.stderr
    assert "stopped before storing them" in served.stderr
    assert list(spill.glob("*/*.jsonl")) == []  # written, then the file removed at a clean exit
    capsys.readouterr()
    assert main(["traces", "status", "--home", str(home), "--store", url]) == 0
    out = capsys.readouterr().out
    assert f"to    store {StoreUrl(url).masked()}" not in out, out  # nothing lost on the way to this store
    db.close()
    stoppable_postgres.drop_database(url)
