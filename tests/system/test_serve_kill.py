"""A server killed with ``kill -9`` under load keeps the trace of every search it answered.

An answer leaves only once its trace is committed to the store (``traces.commits``): before, the
traces of the last second's answers were still in the batch processor's queue (issue 23: 6 of 513
lost, and 3 more without their root span; 2 lost when one of two workers was killed). The servers
here export their batches every 600 s, so without the commit before the answer every trace answered
before the kill would be lost. Traffic is loopback only, bounded in requests and in time.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable

import httpx
import pytest
from test_serve_workers import _wait_ready, serving

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="--workers needs SO_REUSEPORT")]

CLIENTS = 4
MOST_PER_CLIENT = 300
DEADLINE_S = 90.0


def _load(url: str, kill_after: int, kill: Callable[[], None]) -> tuple[list[str], int]:
    """Search from ``CLIENTS`` threads; ``kill()`` once ``kill_after`` answers came back, then stop (the
    requests under way meanwhile get their answers or fail). The trace ids of the 200 answers, and the
    requests that got no answer."""
    answered: list[str] = []
    failed = [0]
    lock = threading.Lock()
    killed = threading.Event()
    done = threading.Event()
    deadline = time.monotonic() + DEADLINE_S

    def client(k: int) -> None:
        with httpx.Client(timeout=30) as session:
            for i in range(MOST_PER_CLIENT):
                if done.is_set() or time.monotonic() > deadline:
                    return
                try:
                    r = session.post(f"{url}/v1/search", json={"query": f"harbour storm {k} {i}", "top_k": 3})
                except httpx.HTTPError:
                    with lock:
                        failed[0] += 1
                    continue
                if r.status_code == 200:
                    with lock:
                        answered.append(r.headers["x-trace-id"])
                        n = len(answered)
                    if n == kill_after and not killed.is_set():
                        killed.set()
                        kill()
                        done.set()

    threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(DEADLINE_S + 60)
    assert killed.is_set(), f"only {len(answered)} answers in {DEADLINE_S} s"
    return answered, failed[0]


def _all_stored_whole(home, trace_ids: list[str]) -> None:
    from searchtrace.traces import TraceStore

    store = TraceStore(home / "traces.sqlite")
    try:
        stored = store.stored(trace_ids)
        lost = [t for t in trace_ids if t not in stored]
        assert lost == [], f"{len(lost)} of {len(trace_ids)} answered traces lost"
        for trace_id in trace_ids:
            detail = store.load_trace(trace_id)
            assert detail is not None
            names = [s.name for s in detail.spans]
            assert names.count("POST /v1/search") == 1 and names.count("search") == 1, names
    finally:
        store.close()


def test_kill_9_of_the_server_loses_no_answered_trace(sample_index_path, sample_config):
    home = sample_config.home.root
    with serving(home) as served:
        url = _wait_ready(served, workers=None)
        answered, _ = _load(url, 60, lambda: os.kill(served.process.pid, signal.SIGKILL))
        served.process.wait(30)
    assert served.process.returncode == -signal.SIGKILL
    assert len(answered) >= 60
    _all_stored_whole(home, answered)


def test_a_worker_killed_under_load_loses_no_answered_trace(sample_index_path, sample_config):
    home = sample_config.home.root
    with serving(home, "--workers", "2") as served:
        url = _wait_ready(served)
        pids = [w["pid"] for w in httpx.get(f"{url}/v1/stats", timeout=10).json()["workers"]]
        answered, _ = _load(url, 60, lambda: os.kill(pids[0], signal.SIGKILL))
        served.process.wait(60)  # a worker that dies stops the whole (a supervisor restarts it)
    assert "worker 0 was killed by SIGKILL" in served.stderr, served.stderr
    assert len(answered) >= 60
    _all_stored_whole(home, answered)
