"""Connections to the shared store: one psycopg 3 pool per process and URL.

The pool opens lazily and never blocks its caller for long: one direct
connection first (a server that refuses it, for a wrong password or a database
that does not exist, is one error in the server's words at once), then a
connect gives up after ``connect_timeout`` seconds and a wait for a free
connection after ``timeout``. A connection idle for over :data:`CHECK_IDLE_S` is checked before
it is handed out, so one a server restart broke meanwhile is replaced, not
failed; one in steady use is not (that would cost a round trip on every use),
and if the server went away under it its statement fails
as :class:`BackendUnavailable`, the pool replaces it, and a caller that retries
(the trace buffer does) gets a new one. Every failure to reach the
server is raised as :class:`~searchtrace.errors.BackendUnavailable`, naming the
store by its masked URL. A process forked with an open pool makes its own.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from searchtrace.database.url import StoreUrl
from searchtrace.errors import BackendUnavailable

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

__all__ = ["Database", "database", "unavailable"]

CONNECT_TIMEOUT_S = 5
CHECK_IDLE_S = 1.0
RESTING_S = 2.0
"""After no connection to the server could be made, uses within this long fail at once (a dashboard page, a
CLI read) rather than each waiting out the pool's timeout again. One connection lost in use (a server
restarted, a backend terminated) does not count: the pool replaces it."""


class Database:
    """The shared store's connection pool (thread-safe; connections in autocommit mode).

    Args:
        url: the store.
        max_size: most connections this process holds open.
        timeout: seconds a caller waits for a connection before :class:`BackendUnavailable`.
        application_name: what the server's ``pg_stat_activity`` shows for these connections.
    """

    def __init__(self, url: StoreUrl, *, max_size: int = 8, timeout: float = 10.0,
                 application_name: str = "searchtrace") -> None:
        self.url = url
        self.max_size = max_size
        self.timeout = timeout
        self.application_name = application_name
        self._pool: ConnectionPool | None = None
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._last_used: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()
        self._down_until = float("-inf")
        self._down_reason = ""

    def _returned(self, conn: psycopg.Connection[Any]) -> None:
        self._last_used[conn] = time.monotonic()

    def _check(self, conn: psycopg.Connection[Any]) -> None:
        if time.monotonic() - self._last_used.get(conn, float("-inf")) > CHECK_IDLE_S:
            from psycopg_pool import ConnectionPool

            ConnectionPool.check_connection(conn)

    def __repr__(self) -> str:
        return f"Database({self.url.masked()!r})"

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection for the block (autocommit: use ``conn.transaction()`` for several statements).

        Raises:
            BackendUnavailable: the server cannot be reached within the timeouts.
        """
        import psycopg
        from psycopg_pool import PoolTimeout

        if time.monotonic() < self._down_until:  # failed a moment ago: say so at once, not after another timeout
            raise BackendUnavailable(self._down_reason, field="store")
        try:
            with self._get_pool().connection(timeout=self.timeout) as conn:
                yield conn
        except PoolTimeout as exc:  # no connection could be made: the server is out of reach for now
            error = unavailable(self.url, exc)
            self._down_until, self._down_reason = time.monotonic() + RESTING_S, error.message
            raise error from exc
        except psycopg.OperationalError as exc:  # one connection lost (the pool replaces it): the next use tries
            raise unavailable(self.url, exc) from exc

    def close(self) -> None:
        """Close this process's pool (a later use opens a new one)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None and self._pid == os.getpid():
            pool.close(timeout=2.0)

    def _get_pool(self) -> ConnectionPool:
        if self._pool is not None and self._pid == os.getpid():
            return self._pool
        with self._lock:
            if self._pid != os.getpid():  # forked: the parent's pool and its threads stay the parent's
                self._pool, self._pid = None, os.getpid()
            if self._pool is None:
                from psycopg_pool import ConnectionPool

                self._probe()
                self._pool = ConnectionPool(
                    self.url.conninfo, min_size=1, max_size=self.max_size, open=False, timeout=self.timeout,
                    check=self._check, reset=self._returned, name="searchtrace",
                    kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S,
                            "application_name": self.application_name})
                self._pool.open(wait=False)
            return self._pool


    def _probe(self) -> None:
        """One direct connection before the pool is made: a server that refuses it (down, a wrong password, no
        such database) is one error at once, in the server's own words, not the pool's timeout after its
        workers' retries. It then rests for :data:`RESTING_S` like a pool that timed out."""
        import psycopg

        try:
            psycopg.connect(self.url.conninfo, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True,
                            application_name=self.application_name).close()
        except psycopg.OperationalError as exc:
            error = unavailable(self.url, exc)
            self._down_until, self._down_reason = time.monotonic() + RESTING_S, error.message
            raise error from exc


_NO_TLS = "does not support SSL"
"""libpq's words for a server without TLS asked for it (``sslmode=require`` or stricter)."""


def unavailable(url: StoreUrl, exc: BaseException) -> BackendUnavailable:
    """The error for a store that cannot be reached, naming it masked and the driver's first line (and, for a
    server without TLS asked for it, which URL a local server takes)."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if _NO_TLS in reason:
        reason += " (the server has no TLS: a server on this machine takes sslmode=disable, or no sslmode)"
    return BackendUnavailable(f"store {url.masked()} is unreachable: {reason}", field="store")


_open: dict[str, Database] = {}
_open_lock = threading.Lock()


def database(url: StoreUrl) -> Database:
    """This process's :class:`Database` for ``url`` (one pool per URL, shared by every store that uses it)."""
    with _open_lock:
        db = _open.get(url.conninfo)
        if db is None:
            db = _open[url.conninfo] = Database(url)
        return db
