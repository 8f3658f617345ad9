"""``searchtrace serve --workers 2``: two real server processes on one loopback port.

The command runs as a user runs it (a subprocess on an ephemeral port, the
sample dataset's index already built in the home): connections spread over
both workers, every request is traced exactly once in the shared store, /readyz
and /v1/stats speak for both, and SIGTERM stops everything cleanly.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from serve_helpers import make_service

from searchtrace.retriever.serve.workers import WorkerBoard, WorkerState

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"
REQUESTS = 32  # each on a connection of its own: all on one worker by chance has probability 2**-31

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="--workers needs SO_REUSEPORT (Linux)")


def test_the_board_keeps_one_row_per_worker():
    board = WorkerBoard.create(2)
    board.row(1).set_state(WorkerState.READY)
    board.row(1).publish(searches=5, queries=6, model_calls=4)
    assert board.rows() == [{"pid": 0, "state": "opening", "searches": 0, "queries": 0, "modelCalls": 0},
                            {"pid": os.getpid(), "state": "ready", "searches": 5, "queries": 6, "modelCalls": 4}]
    with pytest.raises(IndexError):
        board.row(2)


def test_ready_only_when_every_worker_is_and_stats_add_up_the_workers(sample_index_path, sample_config, model):
    from opentelemetry.trace import NoOpTracer

    from searchtrace.traces import vocabulary

    board = WorkerBoard.create(2)
    service = make_service([SAMPLE], sample_config, sample_index_path, model, NoOpTracer(), worker=board.row(0))
    try:
        service.open()
        assert service.readiness() == {"ready": False, "datasets": {"sample": True},
                                       "workers": {"ready": 1, "total": 2}}  # the other one still opens
        board.row(1).set_state(WorkerState.READY)
        board.row(1).publish(searches=4, queries=4, model_calls=3)
        assert service.readiness()["ready"] is True
        asyncio.run(service.search({"query": "hot springs of Emberly"}, None, vocabulary.Source.HTTP))
        stats = service.stats()
        assert [w["searches"] for w in stats["workers"]] == [1, 4] and stats["searchesServed"] == 5
        assert stats["workers"][0]["pid"] == os.getpid()
    finally:
        service.close()


def test_a_port_in_use_is_refused_not_shared():
    from searchtrace.errors import ConfigError
    from searchtrace.retriever.serve.workers import bind, reserve

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError, match=f"127.0.0.1:{port}"):
            reserve("127.0.0.1", port)
    held = reserve("127.0.0.1", 0)  # a free port, held for the workers
    port = held.getsockname()[1]
    worker = bind("127.0.0.1", port, shared=True)  # a worker joins it and listens
    worker.listen()
    try:
        with pytest.raises(ConfigError, match=f"127.0.0.1:{port}"):  # a second server may not join
            reserve("127.0.0.1", port)
    finally:
        worker.close()
        held.close()


def test_workers_are_refused_with_mcp_over_stdio():
    r = subprocess.run([sys.executable, "-m", "searchtrace", "serve", "--mcp", "stdio", "--workers", "2",
                        str(SAMPLE)], capture_output=True, text=True, timeout=60, cwd=REPO, env=_env())
    assert r.returncode == 2 and "--workers" in r.stderr and "Traceback" not in r.stderr


@dataclass
class Served:
    """A ``searchtrace serve`` subprocess: its stderr lines so far, and its exit code once stopped."""

    process: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    code: int | None = None

    @property
    def stderr(self) -> str:
        return "".join(self.lines)


@contextmanager
def serving(home: Path, *flags: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    """Run ``searchtrace serve SAMPLE --port 0`` (traces written at exit only, unless ``env`` sets the delay);
    SIGTERM it on the way out."""
    process = subprocess.Popen([sys.executable, "-m", "searchtrace", "serve", str(SAMPLE), "--home", str(home),
                                "--port", "0", "--no-progress", *flags], cwd=REPO,
                               env={**_env(export_delay_ms=600_000), **(env or {})}, stderr=subprocess.PIPE, text=True)
    served, stream = Served(process), process.stderr
    assert stream is not None
    reader = threading.Thread(target=lambda: served.lines.extend(iter(stream.readline, "")), daemon=True)
    reader.start()
    try:
        yield served
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            served.code = process.wait(60)
        finally:
            process.kill()
        reader.join(10)


@pytest.mark.slow
def test_two_workers_share_the_port_trace_every_request_once_and_stop_cleanly(sample_index_path, sample_config):
    from searchtrace.traces import TraceStore

    home = sample_config.home.root
    with serving(home, "--workers", "2") as served:
        url = _wait_ready(served)

        def one(i: int) -> httpx.Response:
            return httpx.post(f"{url}/v1/search", json={"query": f"hot springs {i}", "top_k": 3}, timeout=30)

        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(one, range(REQUESTS)))
        assert [r.status_code for r in answers] == [200] * REQUESTS
        ids = [r.headers["x-trace-id"] for r in answers]
        assert len(set(ids)) == REQUESTS

        stats = httpx.get(f"{url}/v1/stats", timeout=10).json()
        workers = stats["workers"]
        assert [w["state"] for w in workers] == ["ready", "ready"]
        assert all(w["searches"] > 0 for w in workers), workers  # the kernel spread the connections
        assert stats["searchesServed"] == sum(w["searches"] for w in workers) == REQUESTS
        pids = [w["pid"] for w in workers]
        assert len(set(pids)) == 2 and served.process.pid not in pids
    assert served.code == 0, served.stderr
    assert "Traceback" not in served.stderr and "exited with code" not in served.stderr, served.stderr
    for pid in pids:  # both workers gone with the parent
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    store = TraceStore(home / "traces.sqlite")  # the workers flushed every trace before exiting
    try:
        assert set(store.stored(ids)) == set(ids)
        for trace_id in ids:
            names = [s.name for s in store.load_trace(trace_id).spans]
            assert names.count("POST /v1/search") == 1 and names.count("search") == 1, names
    finally:
        store.close()


@pytest.mark.slow
def test_one_process_announces_its_port_and_flushes_its_traces_on_sigterm(sample_index_path, sample_config):
    from searchtrace.traces import TraceStore

    home = sample_config.home.root
    with serving(home) as served:
        url = _wait_ready(served, workers=None)
        port = int(url.rsplit(":", 1)[1])
        taken = subprocess.run([sys.executable, "-m", "searchtrace", "serve", str(SAMPLE), "--home", str(home),
                                "--port", str(port), "--no-progress"], cwd=REPO, env=_env(), capture_output=True,
                               text=True, timeout=60)
        assert taken.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in taken.stderr, taken.stderr
        trace_id = httpx.post(f"{url}/v1/search", json={"query": "hot springs"}, timeout=30).headers["x-trace-id"]
    assert served.code == 0, served.stderr
    store = TraceStore(home / "traces.sqlite")
    try:
        assert trace_id in store.stored([trace_id])
    finally:
        store.close()


def _env(export_delay_ms: int = 50) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "HF_HUB_OFFLINE": "1", "SEARCHTRACE_OTLP": "0",
            "OTEL_BSP_SCHEDULE_DELAY": str(export_delay_ms)}


def _wait_ready(served: Served, workers: int | None = 2, timeout_s: float = 180) -> str:
    """The URL the server announces on stderr, once /readyz says it (every worker) is ready."""
    deadline = time.monotonic() + timeout_s
    url = None
    while time.monotonic() < deadline:
        assert served.process.poll() is None, served.stderr
        if url is None and (found := re.search(r"http://127\.0\.0\.1:(\d+)", served.stderr)):
            url = f"http://127.0.0.1:{found.group(1)}"
        if url is not None:
            try:
                ready = httpx.get(f"{url}/readyz", timeout=5)
                if ready.status_code == 200:
                    assert ready.json().get("workers") == (workers and {"ready": workers, "total": workers})
                    return url
            except httpx.HTTPError:
                pass
        time.sleep(0.2)
    raise AssertionError(f"not ready in {timeout_s} s: {served.stderr}")
