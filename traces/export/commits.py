"""Stored before answered: a server waits for its trace's commit to the local store before it responds.

The store's batch processor writes finished spans every second, so a server
killed with ``kill -9`` lost the traces of the searches it had answered in its
last second (6 of 513 in the issue 23 probe, 3 more without their root span).
A server now asks, once a request's server span (the trace's root) has ended,
for everything finished so far to be written, and answers when it has been: a
response returned means its trace is in the store, and a process killed at any
moment loses only the traces of searches it had not answered.

One thread does the writing. Every request that arrives while a write is under
way is served by the next one (group commit), so under load one transaction
carries many traces and a request waits for at most about two transactions. The
wait is bounded: when the store is slow or failing (locked by another process,
a full disk) the answer goes out at the timeout anyway, without its trace
stored, and is counted (a failing store degrades a search, never fails it).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError

__all__ = ["StoreCommits"]

log = logging.getLogger(__name__)


class StoreCommits:
    """Group commits of finished spans to the local store, for callers that wait on them.

    Args:
        flush: writes every span finished so far to the store; True when all of them were stored
            (``TraceHandles.flush_store``).
    """

    def __init__(self, flush: Callable[[], bool]) -> None:
        self._flush = flush
        self._cond = threading.Condition()
        self._waiting: list[Future[bool]] = []
        self._closed = False
        self.commits = 0
        """Writes made (each serving every request that was waiting when it began)."""
        self.unstored = 0
        """Requests answered without their trace stored (the write failed or took too long)."""
        self._thread = threading.Thread(target=self._run, name="trace-commits", daemon=True)
        self._thread.start()

    def request(self) -> Future[bool]:
        """A future that resolves once every span finished before this call has been written: True when
        stored, False when the write failed (or the committer is closed)."""
        future: Future[bool] = Future()
        with self._cond:
            if self._closed:
                future.set_result(False)
                return future
            self._waiting.append(future)
            self._cond.notify()
        return future

    def wait(self, timeout_s: float) -> bool:
        """Block until the spans finished so far are stored (True), or failed or timed out (False)."""
        future = self.request()
        try:
            stored = future.result(timeout_s)
        except TimeoutError:
            stored = False
        return self._count(stored)

    async def stored(self, timeout_s: float) -> bool:
        """:meth:`wait` for an event loop: the loop keeps serving while the write is under way."""
        future = self.request()
        try:
            stored = await asyncio.wait_for(asyncio.wrap_future(future), timeout_s)
        except TimeoutError:
            stored = False
        return self._count(stored)

    def _count(self, stored: bool) -> bool:
        if not stored:
            with self._cond:
                self.unstored += 1
                first = self.unstored == 1 or self.unstored % 1000 == 0
            if first:
                log.warning("%d answers went out before their traces were stored (the trace store is slow or "
                            "failing)", self.unstored)
        return stored

    def close(self) -> None:
        """Serve the requests already made, then stop the thread."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._waiting or self._closed)
                batch, self._waiting = self._waiting, []
                if not batch and self._closed:
                    return
            try:
                stored = self._flush()
            except Exception:  # the store exporter logs and counts its own failures; this is a last guard
                log.exception("writing traces to the store failed")
                stored = False
            with self._cond:
                self.commits += 1
            for future in batch:
                try:
                    future.set_result(stored)
                except InvalidStateError:  # its caller stopped waiting (timed out, cancelled)
                    pass
