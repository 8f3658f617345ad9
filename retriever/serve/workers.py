"""Several server processes on one port: ``searchtrace serve --workers N``.

A search's Python (stages, fusion, tracing) runs one thread at a time per
process, so one process uses about one core however many clients wait. With N
workers, the parent reserves the port and starts N processes (spawned: they
inherit none of its threads); each opens its own read-only view of the indexes
(the index takes many readers), writes its traces to the home's store (which
takes many writer processes) and listens on the port with ``SO_REUSEPORT``, so
the kernel spreads connections across them. A table in shared memory, one row
per worker (pid, state, searches, queries embedded, model calls), lets any worker
answer ``/readyz`` for all of them and ``/v1/stats`` with totals.

On SIGINT or SIGTERM the parent asks every worker to stop (SIGTERM: uvicorn
finishes the requests in flight, then the worker flushes its traces) and waits
for them. A worker that dies on its own stops the server: the others are
stopped too and the parent exits 1, for a supervisor (systemd, Kubernetes) to
restart the whole.
"""

from __future__ import annotations

import enum
import logging
import multiprocessing
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any

from searchtrace.errors import ConfigError
from searchtrace.notices import tell

log = logging.getLogger(__name__)

STOP_TIMEOUT_S = 30.0
"""How long the parent waits for a stopping worker before killing it."""


class WorkerState(enum.IntEnum):
    """Where a worker is: opening its datasets, serving, or failed to open them."""

    OPENING = 0
    READY = 1
    FAILED = 2


_COLUMNS = ("pid", "state", "searches", "queries", "modelCalls")


class WorkerBoard:
    """Shared memory: one row of counters per worker, each written by its own worker only.

    Args:
        n: how many workers.
        cells: ``n`` rows of shared 64-bit integers (see :meth:`create`).
    """

    def __init__(self, n: int, cells: Any) -> None:
        self.n = n
        self._cells = cells

    @classmethod
    def create(cls, n: int, context: Any = None) -> WorkerBoard:
        """A board of ``n`` zeroed rows, to hand to processes of ``context`` (default: spawn) as they start."""
        context = context or multiprocessing.get_context("spawn")
        return cls(n, context.RawArray("q", n * len(_COLUMNS)))

    def row(self, index: int) -> WorkerRow:
        """Worker ``index``'s row."""
        if not 0 <= index < self.n:
            raise IndexError(f"worker {index} of {self.n}")
        return WorkerRow(self, index)

    def rows(self) -> list[dict[str, Any]]:
        """Every worker's row: ``pid`` (0 until it has one), ``state`` (lower-case name) and its counters."""
        out = []
        for i in range(self.n):
            values = self._cells[i * len(_COLUMNS):(i + 1) * len(_COLUMNS)]
            row: dict[str, Any] = dict(zip(_COLUMNS, values))
            row["state"] = WorkerState(row["state"]).name.lower()
            out.append(row)
        return out

    def _set(self, index: int, column: str, value: int) -> None:
        self._cells[index * len(_COLUMNS) + _COLUMNS.index(column)] = value


@dataclass(frozen=True)
class WorkerRow:
    """One worker's view of the board: it writes its own row and reads all of them."""

    board: WorkerBoard
    index: int

    def set_state(self, state: WorkerState) -> None:
        """This worker's state (and its process id)."""
        self.board._set(self.index, "pid", os.getpid())
        self.board._set(self.index, "state", int(state))

    def publish(self, searches: int, queries: int, model_calls: int) -> None:
        """This worker's counters so far."""
        for column, value in zip(_COLUMNS[2:], (searches, queries, model_calls)):
            self.board._set(self.index, column, value)


def cores() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def check_supported(workers: int) -> None:
    """Raise ConfigError when ``workers`` > 1 cannot share a port on this platform."""
    if workers > 1 and not (sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")):
        raise ConfigError(f"--workers {workers}: several workers share the port with SO_REUSEPORT, which spreads "
                          "connections only on Linux; use --workers 1 here", field="workers")


def bind(host: str, port: int, *, shared: bool = False) -> socket.socket:
    """A TCP socket bound to ``host:port`` (not listening yet); ``shared``: with ``SO_REUSEPORT``.

    Raises ConfigError naming the address when it cannot be bound (in use, not this machine's).
    """
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a TIME_WAIT is no conflict
    if shared:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}", field="port") from None
    return sock


def reserve(host: str, port: int) -> socket.socket:
    """The port for the workers: bound with ``SO_REUSEPORT``, not listening (it takes no connections).

    Raises ConfigError when something already listens there: every socket with
    ``SO_REUSEPORT`` on a port shares its connections, so a second server would
    silently take half of the first one's traffic instead of failing to start.
    """
    if port:
        bind(host, port).close()  # fails when anything listens there, SO_REUSEPORT or not
    return bind(host, port, shared=True)


def ended(exitcode: int | None) -> str:
    """How a worker ended, for the line that says so: its exit code, or the signal that killed it and its likely cause."""
    if exitcode is None or exitcode >= 0:
        return f"exited with code {exitcode}"
    try:
        name = signal.Signals(-exitcode).name
    except ValueError:
        name = f"signal {-exitcode}"
    cause = " (a memory-mapped file on a full disk, most likely)" if -exitcode == signal.SIGBUS else ""
    return f"was killed by {name}{cause}"


def run_workers(n: int, host: str, port: int, target: Callable[..., None], args: tuple[Any, ...],
                announce: Callable[[int], None]) -> int:
    """Run ``target(*args, row, port)`` in ``n`` spawned processes until a signal or a worker's death.

    Args:
        n: how many worker processes.
        host, port: where they listen (port 0: a free port, chosen here).
        target: a module-level function (it is pickled by name) that serves on the port.
        args: its first arguments (picklable).
        announce: called with the port once the workers start.

    Returns:
        0 when stopped by SIGINT or SIGTERM, 1 when a worker died on its own.
    """
    context = multiprocessing.get_context("spawn")
    board = WorkerBoard.create(n, context)
    reserved = reserve(host, port)
    port = reserved.getsockname()[1]
    processes = [context.Process(target=target, args=(*args, board.row(i), port), name=f"searchtrace-serve-{i}")
                 for i in range(n)]
    stopping: list[int] = []
    previous = {s: signal.signal(s, lambda signum, frame: stopping.append(signum))
                for s in (signal.SIGINT, signal.SIGTERM)}
    code = 0
    try:
        for process in processes:
            process.start()
        announce(port)
        while not stopping:
            if died := [p for p in processes if not p.is_alive()]:
                tell(log, f"error: worker {processes.index(died[0])} {ended(died[0].exitcode)}; "
                          "stopping the other workers", logging.ERROR)
                code = 1
                break
            wait([p.sentinel for p in processes], timeout=0.5)
    finally:
        stop(processes)
        reserved.close()
        for s, handler in previous.items():
            signal.signal(s, handler)
    return code


def stop(processes: list[Any], timeout_s: float = STOP_TIMEOUT_S) -> None:
    """SIGTERM every live worker, wait up to ``timeout_s`` for all of them, then kill any left."""
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + timeout_s
    for process in processes:
        if process.pid is not None:
            process.join(max(deadline - time.monotonic(), 0))
        if process.is_alive():
            process.kill()
            process.join(5)
