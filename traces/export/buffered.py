"""Spans for a shared store that may be out of reach: written at once when it answers, else held.

A team's store is a server: it may restart, fail over or be stopped for an
upgrade while searches go on. A batch the store cannot take is kept, in order,
in a buffer of at most ``capacity`` spans, and one thread writes what the buffer
holds as soon as the store answers again (trying again every ``retry_s``, up to
``max_retry_s`` apart). What does not fit is dropped and counted: on the
exporter's stats, on the server's ``/v1/stats``, and, once the store answers, in
the store itself (``st_export_drops``), where ``searchtrace traces status`` adds
up every process's drops. A search never waits on any of this: exports run on
the batch processor's thread, and a batch that is held returns at once.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections import deque
from collections.abc import Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult

from searchtrace.errors import BackendUnavailable
from searchtrace.traces.export.exporter import FailureKind, _CountingExporter
from searchtrace.traces.store.protocol import TraceStoreProtocol

__all__ = ["BUFFER_SPANS", "BufferedStoreExporter"]

log = logging.getLogger(__name__)

BUFFER_SPANS = 100_000
"""Spans held while the store is out of reach, by default (about 4 KB each: some 400 MB at most)."""
WRITE_SPANS = 5_000  # spans per transaction when the buffer is written out


class BufferedStoreExporter(_CountingExporter):
    """Writes each batch to a shared store (``capabilities.shared``), holding what it cannot write yet.

    Args:
        store: the shared store.
        capacity: most spans held while the store is out of reach; more are dropped, counted.
        retry_s: first pause before trying the store again; doubled up to ``max_retry_s``.
        shutdown_s: how long closing waits for the store to take what is held.
    """

    def __init__(self, store: TraceStoreProtocol, *, capacity: int = BUFFER_SPANS, retry_s: float = 0.25,
                 max_retry_s: float = 2.0, shutdown_s: float = 5.0) -> None:
        super().__init__(f"store {store.location}")
        self.store = store
        self.capacity = capacity
        self.retry_s, self.max_retry_s, self.shutdown_s = retry_s, max_retry_s, shutdown_s
        self.last_failure: FailureKind | None = None
        self._held: deque[Sequence[ReadableSpan]] = deque()
        self._n_held = 0
        self._overflow = 0
        self._noted = 0
        self._lock = threading.Lock()  # the buffer and the order of writes
        self._wake = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self._closing = False
        self._deadline = float("inf")
        self._identity = (socket.gethostname(), os.getpid(), time.time_ns())
        self._outage_logged = False

    @property
    def held(self) -> int:
        """Spans waiting for the store."""
        return self._n_held

    @property
    def overflowed(self) -> int:
        """Spans dropped because the buffer was full."""
        return self._overflow

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not spans:
            return SpanExportResult.SUCCESS
        with self._lock:
            if self._closing:
                return self._counters.dropped(len(spans))
            if not self._n_held:
                try:
                    self.store.write(spans)
                except BackendUnavailable as exc:
                    self._outage(exc)
                except Exception as exc:  # noqa: BLE001 - telemetry never breaks the work it observes
                    self.last_failure = FailureKind.UNEXPECTED
                    return self._counters.failed(FailureKind.UNEXPECTED, len(spans), exc)
                else:
                    return self._counters.ok(len(spans))
            return self._hold(spans)

    def _outage(self, exc: BaseException) -> None:
        self.last_failure = FailureKind.REJECTED
        if not self._outage_logged:
            self._outage_logged = True
            log.warning("trace store out of reach (%s): holding up to %d spans until it answers", exc, self.capacity)

    def _hold(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Keep a batch for later (caller holds the lock); SUCCESS when kept, FAILURE (counted) when full."""
        if self._n_held + len(spans) > self.capacity:
            self._overflow += len(spans)
            return self._counters.dropped(len(spans))
        self._held.append(spans)
        self._n_held += len(spans)
        if self._thread is None:
            self._thread = threading.Thread(target=self._drain, name="searchtrace-store-buffer", daemon=True)
            self._thread.start()
        return SpanExportResult.SUCCESS

    def _drain(self) -> None:
        """The buffer's writer: takes a transaction's worth of held spans at a time (the lock held only to take
        and to put back), so a batch arriving meanwhile is held at once, never kept waiting on the store."""
        pause = self.retry_s
        while True:
            with self._lock:
                if not self._held and self._overflow == self._noted:
                    self._thread = None
                    self._outage_logged = False
                    self._wake.notify_all()
                    return
                if self._closing and time.monotonic() >= self._deadline:
                    self._thread = None
                    self._wake.notify_all()
                    return
                batch = self._take()
                dropped = self._overflow
            if self._write(batch, dropped):
                pause = self.retry_s
                continue
            with self._lock:
                self._wake.wait(pause)
            pause = min(pause * 2, self.max_retry_s)

    def _take(self) -> list[ReadableSpan]:
        """Held batches in order, up to :data:`WRITE_SPANS` spans (at least one batch); caller holds the lock."""
        batch: list[ReadableSpan] = []
        while self._held and (not batch or len(batch) + len(self._held[0]) <= WRITE_SPANS):
            batch.extend(self._held.popleft())
        return batch

    def _write(self, batch: list[ReadableSpan], dropped: int) -> bool:
        """Write taken spans, else the drop count; True when done, False (the spans put back) when out of reach."""
        try:
            if batch:
                self.store.write(batch)
            else:
                host, pid, started = self._identity
                self.store.note_dropped(host, pid, started, dropped, self.capacity)
        except BackendUnavailable:
            if batch:
                with self._lock:
                    if self._n_held:  # not given up by shutdown meanwhile
                        self._held.appendleft(batch)
            return False
        except Exception as exc:  # noqa: BLE001 - what the store refuses is dropped, counted, not retried forever
            with self._lock:
                if batch:
                    self._n_held = max(self._n_held - len(batch), 0)
                    self._counters.failed(FailureKind.UNEXPECTED, len(batch), exc)
                else:
                    self._noted = dropped
            return True
        with self._lock:
            if batch:
                self._n_held = max(self._n_held - len(batch), 0)  # 0 once shutdown gave up what was held
                self._counters.ok(len(batch))
            else:
                self._noted = max(self._noted, dropped)
            self._wake.notify_all()
        return True

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """True when nothing is held (every span exported so far is in the store)."""
        deadline = time.monotonic() + timeout_millis / 1000
        with self._lock:
            while self._n_held and time.monotonic() < deadline and self._thread is not None:
                self._wake.wait(min(0.05, max(deadline - time.monotonic(), 0)))
            return not self._n_held

    def shutdown(self) -> None:
        """Give the store up to ``shutdown_s`` to take what is held; what it does not is dropped, counted, said."""
        with self._lock:
            self._closing = True
            self._deadline = time.monotonic() + self.shutdown_s
            self._wake.notify_all()
            while self._thread is not None and (self._n_held or self._overflow != self._noted) \
                    and time.monotonic() < self._deadline:
                self._wake.wait(0.05)
            lost = self._n_held
            if lost:
                self._held.clear()
                self._n_held = 0
                self._counters.dropped(lost)
                self._overflow += lost
        if lost:
            log.warning("trace store %s still out of reach at exit: %d spans not stored", self.store.location, lost)
