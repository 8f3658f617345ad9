"""``searchtrace dashboard``'s streamlit command on a free loopback port, for the browser tests."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Iterator


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _environ() -> dict[str, str]:
    """This process's environment less an API key set for something else (a key makes the dashboard ask for it)."""
    return {k: v for k, v in os.environ.items() if k != "SEARCHTRACE_API_KEY"}


@contextlib.contextmanager
def serve(home: Path, timeout_s: float = 60.0, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run the dashboard on ``home`` (with ``env`` over the environment); yields its base URL, stops it on exit."""
    from searchtrace.dashboard.cli import streamlit_command

    port = free_port()
    proc = subprocess.Popen(streamlit_command(home, "127.0.0.1", port),
                            env=_environ() | {"SEARCHTRACE_HOME": str(home)} | (env or {}),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.read() == b"ok":
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                out = proc.stdout.read().decode(errors="replace")[-2000:] if proc.stdout else ""
                raise RuntimeError(f"streamlit did not start: {out}")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
