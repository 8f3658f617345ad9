"""Spans for a shared store that may be out of reach: written at once when it answers, else held.

A team's store is a server: it may restart, fail over or be stopped for an
upgrade while searches go on. A batch the store cannot take is kept, in order,
in a buffer of at most ``capacity`` spans, and one thread writes what the buffer
holds as soon as the store answers again (trying again every ``retry_s``, up to
``max_retry_s`` apart). What does not fit is dropped and counted: on the
exporter's stats, on the server's ``/v1/stats``, and, once the store answers, in
the store itself (``st_export_drops``), where ``searchtrace traces status`` adds
up every process's drops, and in the home's losses file (``export.losses``).
Each held batch is also spilled to a bounded file in the home (``export.spill``):
a process killed while holding spans leaves them there, and the next one from
the same home (:meth:`BufferedStoreExporter.recover`) holds and writes them; a
process that exits with the store still out of reach leaves them there too. A
search never waits on any of this: exports run on the batch processor's thread,
and a batch that is held returns at once.
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
from searchtrace.traces.export.exporter import FailureKind, LossSinks, _CountingExporter
from searchtrace.traces.export.spill import SpillFile
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
        spill: where held batches are spilled (None: held in memory only, lost with the process).
        sinks: where drops are counted besides the exporter's stats.
    """

    def __init__(self, store: TraceStoreProtocol, *, capacity: int = BUFFER_SPANS, retry_s: float = 0.25,
                 max_retry_s: float = 2.0, shutdown_s: float = 5.0, spill: SpillFile | None = None,
                 sinks: LossSinks | None = None) -> None:
        super().__init__(f"store {store.location}", sinks)
        self.store = store
        self.spill = spill
        self._recovered = spill is None
        self._spill_warned = False
        self.capacity = capacity
        self.retry_s, self.max_retry_s, self.shutdown_s = retry_s, max_retry_s, shutdown_s
        self.last_failure: FailureKind | None = None
        self._held: deque[tuple[Sequence[ReadableSpan], tuple[int, ...]]] = deque()  # a batch, its spill numbers
        self._n_held = 0
        self._taken: tuple[int, ...] = ()  # the spill numbers of the batches the writer has out of the buffer
        self._n_taken = 0
        self._overflow = 0
        self._noted = 0
        self._lock = threading.Lock()  # the buffer and the order of writes
        self._wake = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self._closing = False
        self._deadline = float("inf")
        self._identity = (socket.gethostname(), os.getpid(), time.time_ns())
        self._outage_logged = False
        self.recovered = 0  # spans taken from killed processes' spill files
        self.kept_at_exit = 0  # spans left in the spill file at exit, for the next start

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
        self.recover()
        with self._lock:
            if self._closing:
                return self._counters.dropped(len(spans), FailureKind.CLOSED)
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

    def recover(self) -> int:
        """Hold (and write when the store answers) the spans killed processes of this home spilled and did not
        store; how many. Done once, on the first export or at start (``TraceHandles.check_store``)."""
        if self._recovered or self.spill is None:
            return 0
        with self._lock:
            if self._recovered:
                return 0
            self._recovered = True
            try:
                found = self.spill.recover()
            except OSError as exc:
                log.warning("spilled spans in %s could not be read: %s", self.spill.folder, exc)
                return 0
            taken = sum(len(b) for b in found.batches)
            self.recovered += taken
            held = sum(len(b) for b in found.batches if self._hold(b) is SpanExportResult.SUCCESS)
        if found.unreadable_spans:
            self._counters.dropped(found.unreadable_spans, FailureKind.SPILL_UNREADABLE)
        if found.files:
            log.warning("%d spans held for %s by processes that stopped before storing them were found in %s; "
                        "they are written when it answers", held, self.store.location, self.spill.folder)
        return held

    def _hold(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Keep a batch for later (caller holds the lock), spilled; SUCCESS when kept, FAILURE (counted) when
        the buffer or the spill file is full."""
        if self._n_held + len(spans) > self.capacity:
            self._overflow += len(spans)
            return self._counters.dropped(len(spans), FailureKind.BUFFER_FULL)
        seq = None
        if self.spill is not None:
            try:
                seq = self.spill.hold(spans)
            except OSError as exc:
                self._cannot_spill(exc)
            else:
                if seq is None:
                    self._overflow += len(spans)
                    return self._counters.dropped(len(spans), FailureKind.BUFFER_FULL)
        self._held.append((spans, () if seq is None else (seq,)))
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
                batch, seqs = self._take()
                dropped = self._overflow
            if self._write(batch, seqs, dropped):
                pause = self.retry_s
                continue
            with self._lock:
                self._wake.wait(pause)
            pause = min(pause * 2, self.max_retry_s)

    def _take(self) -> tuple[list[ReadableSpan], tuple[int, ...]]:
        """Held batches in order, up to :data:`WRITE_SPANS` spans (at least one batch), and their spill numbers;
        caller holds the lock."""
        batch: list[ReadableSpan] = []
        seqs: tuple[int, ...] = ()
        while self._held and (not batch or len(batch) + len(self._held[0][0]) <= WRITE_SPANS):
            spans, numbers = self._held.popleft()
            batch.extend(spans)
            seqs += numbers
        self._taken, self._n_taken = seqs, len(batch)
        return batch, seqs

    def _done(self, seqs: tuple[int, ...]) -> None:
        """Taken batches are stored or given up (caller holds the lock): marked so in the spill file."""
        if self.spill is None:
            return
        try:
            self.spill.stored(seqs)
            if not self._n_held:
                self.spill.empty()
        except OSError as exc:
            self._cannot_spill(exc)

    def _cannot_spill(self, exc: BaseException) -> None:
        if not self._spill_warned:
            self._spill_warned = True
            log.warning("held spans cannot be spilled to %s (%s): they are kept in memory only, and lost if the "
                        "process is killed", self.spill.folder if self.spill else None, exc)

    def _release_spill(self, kept: int) -> None:
        """Close the spill file at exit: left for the next start when it holds spans, else removed."""
        assert self.spill is not None
        try:
            if kept:
                self.spill.keep()
            else:
                self.spill.close()
        except OSError as exc:
            self._cannot_spill(exc)

    def _write(self, batch: list[ReadableSpan], seqs: tuple[int, ...], dropped: int) -> bool:
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
                    self._taken, self._n_taken = (), 0
                    if self._n_held:  # not given up by shutdown meanwhile
                        self._held.appendleft((batch, seqs))
            return False
        except Exception as exc:  # noqa: BLE001 - what the store refuses is dropped, counted, not retried forever
            with self._lock:
                self._taken, self._n_taken = (), 0
                if batch:
                    self._n_held = max(self._n_held - len(batch), 0)
                    self._counters.failed(FailureKind.UNEXPECTED, len(batch), exc)
                    self._done(seqs)
                else:
                    self._noted = dropped
            return True
        with self._lock:
            self._taken, self._n_taken = (), 0
            if batch:
                self._n_held = max(self._n_held - len(batch), 0)  # 0 once shutdown gave up what was held
                self._counters.ok(len(batch))
                self._done(seqs)
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
        """Give the store up to ``shutdown_s`` to take what is held; what it does not is left in the spill file
        for the next start, said; what was not spilled is dropped, counted, said."""
        with self._lock:
            self._closing = True
            self._deadline = time.monotonic() + self.shutdown_s
            self._wake.notify_all()
            while self._thread is not None and (self._n_held or self._overflow != self._noted) \
                    and time.monotonic() < self._deadline:
                self._wake.wait(0.05)
            kept = sum(len(spans) for spans, seqs in self._held if seqs) + (self._n_taken if self._taken else 0)
            lost = self._n_held - kept
            self.kept_at_exit = kept
            self._held.clear()
            self._n_held = 0
            if lost:
                self._counters.dropped(lost, FailureKind.UNSTORED_AT_EXIT)
                self._overflow += lost
            if self.spill is not None:
                self._release_spill(kept)
        if self._counters.sinks.log is not None:
            self._counters.sinks.log.flush()
        if kept:
            log.warning("trace store %s still out of reach at exit: %d spans kept in %s for the next start",
                        self.store.location, kept, self.spill.folder if self.spill else None)
        if lost:
            log.warning("trace store %s still out of reach at exit: %d spans not stored", self.store.location, lost)
