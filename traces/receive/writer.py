"""Group commit: the spans of concurrent requests written by one thread, one ``store.write`` per batch.

A request's spans go in a bounded queue and the request waits on its ticket; the writer takes every request
waiting (up to ``batch_spans``), writes them in one transaction, and answers each ticket. So a 200 means
committed (or, for a shared store out of reach, held in its exporter's bounded buffer and spill file), many
requests share a commit, and a full queue refuses at once (503) instead of growing. Closing stops taking new
requests and writes every one already taken.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from searchtrace.home import Home
from searchtrace.traces.export.buffered import BufferedStoreExporter
from searchtrace.traces.export.droplog import DropLog
from searchtrace.traces.export.exporter import FailureKind, LossSinks, StoreSpanExporter
from searchtrace.traces.export.losses import LossLedger
from searchtrace.traces.export.spill import SpillFile, spill_folder
from searchtrace.traces.store.protocol import TraceStoreProtocol

__all__ = ["GroupWriter", "store_exporter"]

log = logging.getLogger(__name__)

LOCAL_RETRY_S = 2.0
"""How long a batch for the home's file waits on another process's lock before its requests answer 503."""


def store_exporter(store: TraceStoreProtocol, home: Home | None = None) -> SpanExporter:
    """What writes a batch: the local store in one transaction; a shared store through the bounded buffer that
    holds a batch while it is out of reach (spilled to ``home``'s file so a kill loses nothing held; its drops
    counted in ``home``'s losses, which ``traces status`` reads). A local batch that fails is answered 503:
    the sender still has it, so it is not counted as lost."""
    if not store.capabilities.shared:
        return StoreSpanExporter(store, retry_s=LOCAL_RETRY_S)
    if home is None:
        return BufferedStoreExporter(store)
    return BufferedStoreExporter(store, sinks=LossSinks(LossLedger(home.trace_losses), DropLog()),
                                 spill=SpillFile(spill_folder(home.trace_spill, store.location)))


class GroupWriter:
    """One writer thread over ``exporter``, fed by a queue of at most ``capacity`` spans; ``owns_exporter``:
    closing shuts the exporter (and its store) too (``serve``'s store is its own, closed by it)."""

    def __init__(self, exporter: SpanExporter, capacity: int, batch_spans: int = 20_000,
                 owns_exporter: bool = True) -> None:
        self.exporter = exporter
        self.owns_exporter = owns_exporter
        self.capacity = capacity
        self.batch_spans = batch_spans
        self._queue: deque[tuple[Sequence[ReadableSpan], Future[bool]]] = deque()
        self._pending = 0  # spans queued or being written: what the capacity bounds
        self._cond = threading.Condition()
        self._closing = False
        self._thread: threading.Thread | None = None
        self.commits = 0

    @property
    def pending(self) -> int:
        return self._pending

    def submit(self, spans: Sequence[ReadableSpan]) -> Future[bool] | None:
        """A ticket that resolves True once ``spans`` are written (False: the write failed); None at once when
        the queue has no room or the writer is closing."""
        ticket: Future[bool] = Future()
        if not spans:
            ticket.set_result(True)
            return ticket
        with self._cond:
            if self._closing or self._pending + len(spans) > self.capacity:
                return None
            self._queue.append((spans, ticket))
            self._pending += len(spans)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="searchtrace-receive-writer", daemon=True)
                self._thread.start()
            self._cond.notify()
        return ticket

    @property
    def held(self) -> int:
        """Spans acknowledged but held for a shared store out of reach (0 for a local store)."""
        return int(getattr(self.exporter, "held", 0))

    def recover(self) -> int:
        """Hold (and write when the store answers) what processes of this home killed or stopped while the
        shared store was out of reach left in their spill files; how many spans (0 for a local store)."""
        recover = getattr(self.exporter, "recover", None)
        return int(recover()) if recover is not None else 0

    def close(self, timeout_s: float = 30.0) -> bool:
        """Take nothing more, write everything taken, then shut the exporter; True when all was written in
        time."""
        with self._cond:
            if self._closing:
                return True
            self._closing = True
            self._cond.notify()
            thread = self._thread
        if thread is not None:
            thread.join(timeout_s)
        done = thread is None or not thread.is_alive()
        if self.owns_exporter:
            self.exporter.shutdown()
        return done

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closing:
                    self._cond.wait()
                if not self._queue:
                    return
                batch = self._take()
            results = self._write_batch(batch)
            with self._cond:
                self._pending -= sum(len(spans) for spans, _ in batch)
            for (_, ticket), ok in zip(batch, results):
                ticket.set_result(ok)

    def _take(self) -> list[tuple[Sequence[ReadableSpan], Future[bool]]]:
        """Requests waiting, in order, up to ``batch_spans`` spans (at least one request); caller holds the lock."""
        batch = [self._queue.popleft()]
        size = len(batch[0][0])
        while self._queue and size + len(self._queue[0][0]) <= self.batch_spans:
            size += len(self._queue[0][0])
            batch.append(self._queue.popleft())
        return batch

    def _write_batch(self, batch: list[tuple[Sequence[ReadableSpan], Future[bool]]]) -> list[bool]:
        """Each request's outcome. A batch the store refused for something in it (not for being out of
        reach, locked or full) is written again request by request, so one request the store cannot take
        fails alone instead of every request that shared its commit, again at each retry."""
        if self._write([s for spans, _ in batch for s in spans]):
            return [True] * len(batch)
        if len(batch) == 1 or getattr(self.exporter, "last_failure", None) is not FailureKind.UNEXPECTED:
            return [False] * len(batch)
        return [self._write(list(spans)) for spans, _ in batch]

    def _write(self, spans: list[ReadableSpan]) -> bool:
        try:
            ok = self.exporter.export(spans) is SpanExportResult.SUCCESS
        except Exception:  # noqa: BLE001 - a failed write is answered 503; the writer goes on
            log.exception("writing %d received spans failed", len(spans))
            ok = False
        self.commits += ok
        return ok
