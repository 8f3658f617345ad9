"""A Bolt server for the graph contract suite.

``NEO4J_URI`` (with ``NEO4J_USER``, ``NEO4J_PASSWORD``, ``NEO4J_DATABASE``)
points the suite at an existing server, whose ``:Entity`` nodes it deletes.
Otherwise ArcadeDB from the ``arcadedb-embedded`` wheel is started with its Bolt
plugin, in a child process (its JVM cannot be stopped and restarted inside
pytest's), on loopback ports, with its databases and logs in a temporary folder.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

STARTUP_TIMEOUT_S = 90.0
READY = "ARCADEDB BOLT READY"
DATABASE = "searchtrace_graph_test"

# Run by the child interpreter: argv = root, http port, bolt port, database;
# the root password comes in the environment. Closing stdin stops the server.
SERVER = f"""
import os, sys
import arcadedb_embedded as adb
from arcadedb_embedded.jvm import start_jvm

root, http_port, bolt_port, database = sys.argv[1:5]
start_jvm(heap_size="512m")
server = adb.create_server(root_path=root, root_password=os.environ["ARCADEDB_ROOT_PASSWORD"], config={{
    "host": "127.0.0.1",
    "http_port": int(http_port),
    "server_plugins": "Bolt:com.arcadedb.bolt.BoltProtocolPlugin",
    "bolt_port": int(bolt_port),
    "bolt_defaultDatabase": database,
}})
server.start()
server.create_database(database)
print({READY!r}, flush=True)
sys.stdin.read()
server.stop()
"""


class BoltServer(NamedTuple):
    uri: str
    user: str
    password: str
    database: str | None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _tail(path: Path, lines: int = 25) -> str:
    text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    return "\n".join(text.splitlines()[-lines:])


def _wait_ready(proc: subprocess.Popen, log: Path, port: int) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(
                f"ArcadeDB (arcadedb-embedded) exited with status {proc.returncode} before Bolt came up; "
                f"deselect with -m 'not bolt'. Log tail:\n{_tail(log)}",
                pytrace=False,
            )
        if READY in _tail(log, 200) and _accepts(port):
            return
        time.sleep(0.1)
    pytest.fail(
        f"ArcadeDB Bolt port {port} not accepting after {STARTUP_TIMEOUT_S:.0f}s; "
        f"deselect with -m 'not bolt'. Log tail:\n{_tail(log)}",
        pytrace=False,
    )


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            proc.stdin.close()  # type: ignore[union-attr]
            proc.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture(scope="session")
def bolt_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BoltServer]:
    """``(uri, user, password, database)`` of a Bolt server for the session."""
    if os.environ.get("NEO4J_URI"):
        yield BoltServer(
            os.environ["NEO4J_URI"],
            os.environ.get("NEO4J_USER", "neo4j"),
            os.environ.get("NEO4J_PASSWORD", ""),
            os.environ.get("NEO4J_DATABASE") or None,
        )
        return
    if importlib.util.find_spec("arcadedb_embedded") is None:
        pytest.skip("no Bolt server: set NEO4J_URI or install arcadedb-embedded (the dev extra)")
    home = tmp_path_factory.mktemp("arcadedb")
    log = home / "server.log"
    password = secrets.token_urlsafe(16)
    bolt_port, http_port = free_port(), free_port()
    env = {**os.environ, "ARCADEDB_ROOT_PASSWORD": password, "ARCADEDB_JVM_ERROR_FILE": str(home / "hs_err_%p.log")}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(home / "root"), str(http_port), str(bolt_port), DATABASE],
            cwd=home,  # ArcadeDB writes ./log relative to the working directory
            env=env,
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_ready(proc, log, bolt_port)
        yield BoltServer(f"bolt://127.0.0.1:{bolt_port}", "root", password, DATABASE)
    finally:
        _stop(proc)
