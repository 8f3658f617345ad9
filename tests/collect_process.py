"""``searchtrace collect`` started as a process, as a user starts it: on a free loopback port, with its own home,
its output in a file beside it (tests/system/test_collect.py, test_foreign_loop.py, test_joined_traces.py)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

__all__ = ["Collector", "free_port"]

ROOT = Path(__file__).resolve().parents[1]
STARTUP_S = 60  # a loaded machine starts a Python process slowly


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Collector:
    """``searchtrace collect`` on a free loopback port with its own home; its stderr in a file."""

    def __init__(self, home: Path, *extra: str) -> None:
        self.home = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1/traces"
        self.log = home.parent / "collect.log"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "SEARCHTRACE_STORE": "", "SEARCHTRACE_API_KEY": ""}
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "searchtrace", "collect", "--port", str(self.port),
                                          "--home", str(home), "--every", "0", *extra], env=env, stdout=out, stderr=out)
        self._wait()

    def _wait(self) -> None:
        deadline = time.monotonic() + STARTUP_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"collect exited {self.proc.returncode}: {self.log.read_text()}")
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        pytest.fail(f"collect did not answer within {STARTUP_S} s: {self.log.read_text()}")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(30)

    def kill(self) -> None:
        """End the process now when it still runs (a test's cleanup)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
