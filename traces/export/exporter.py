"""Span exporters that never break the search they observe.

Exports run on the BatchSpanProcessor's worker thread, off the search's path.
Here every failure (a locked store, a full disk, a dead collector, a bug) is
caught, counted and logged once per kind, and the batch is reported as
``FAILURE`` so the SDK drops it. A store locked by another process is waited
for (the write is retried for up to ``retry_s``) before that; a damaged store
is set aside and a new one started, once.
"""

from __future__ import annotations

import enum
import errno
import logging
import sqlite3
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping, Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from searchtrace.traces.export.droplog import DropLog
from searchtrace.traces.export.losses import LossLedger
from searchtrace.traces.store.protocol import TraceStoreProtocol

log = logging.getLogger(__name__)


class FailureKind(str, enum.Enum):
    """Why an export failed; each kind is logged once per exporter."""

    LOCKED = "locked"
    DISK_FULL = "disk_full"
    READ_ONLY = "read_only"
    CORRUPT = "corrupt"
    REJECTED = "rejected"  # the wrapped exporter returned FAILURE (collector down, refused, timed out)
    UNEXPECTED = "unexpected"
    BUFFER_FULL = "buffer_full"  # the shared store's buffer (or its spill file) had no room while it was out
    UNSTORED_AT_EXIT = "unstored_at_exit"  # still held for an unreachable store when the process closed
    RESTING = "resting"  # dropped while a failed collector rests (``SafeExporter``'s cooldown)
    CLOSED = "closed"  # handed to an exporter already shut down
    SPILL_UNREADABLE = "spill_unreadable"  # a spilled batch a killed process left that cannot be read back
    QUEUE_FULL = "queue_full"  # ended, never handed to the exporter: the batch processor's queue was full


def failure_kind(exc: BaseException) -> FailureKind:
    """Classify an export exception."""
    text = str(exc).lower()
    if isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        return FailureKind.LOCKED
    if "disk is full" in text or (isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)):
        return FailureKind.DISK_FULL
    if "readonly" in text or "read-only" in text or (isinstance(exc, OSError) and exc.errno == errno.EROFS):
        return FailureKind.READ_ONLY
    if isinstance(exc, sqlite3.DatabaseError) and ("malformed" in text or "not a database" in text):
        return FailureKind.CORRUPT
    return FailureKind.UNEXPECTED


@dataclass(frozen=True)
class ExportStats:
    """Counters of one exporter since it was built."""

    exported_spans: int = 0
    dropped_spans: int = 0
    failures: int = 0
    by_kind: Mapping[FailureKind, int] = field(default_factory=dict)
    by_reason: Mapping[FailureKind, int] = field(default_factory=dict)  # spans dropped, by why


@dataclass(frozen=True)
class LossSinks:
    """Where an exporter's drops are said besides its own counters: the home's losses file (read by
    ``traces status``) and the minute's log line. Either may be None (a test's bare exporter)."""

    ledger: LossLedger | None = None
    log: DropLog | None = None


class _Counters:
    """Thread-safe counters that log the first failure of each kind, and count every drop in the sinks."""

    def __init__(self, name: str, sinks: LossSinks | None = None) -> None:
        self.name = name
        self.sinks = sinks or LossSinks()
        self._lock = threading.Lock()
        self._stats = ExportStats()

    def ok(self, n: int) -> SpanExportResult:
        with self._lock:
            self._stats = replace(self._stats, exported_spans=self._stats.exported_spans + n)
        if self.sinks.ledger is not None:
            self.sinks.ledger.prepare()  # while there is room: a full disk later can still be counted
        if self.sinks.log is not None:
            self.sinks.log.tick()
        return SpanExportResult.SUCCESS

    def dropped(self, n: int, reason: FailureKind) -> SpanExportResult:
        with self._lock:
            self._stats = replace(self._stats, dropped_spans=self._stats.dropped_spans + n,
                                  by_reason={**self._stats.by_reason,
                                             reason: self._stats.by_reason.get(reason, 0) + n})
        self._said(reason, n)
        return SpanExportResult.FAILURE

    def _said(self, reason: FailureKind, n: int) -> None:
        if n and self.sinks.ledger is not None:
            self.sinks.ledger.add(reason.value, self.name, n)
        if self.sinks.log is not None:
            self.sinks.log.dropped(reason.value, n)

    def failed(self, kind: FailureKind, n: int, detail: object) -> SpanExportResult:
        with self._lock:
            s = self._stats
            first = kind not in s.by_kind
            self._stats = replace(s, dropped_spans=s.dropped_spans + n, failures=s.failures + 1,
                                  by_kind={**s.by_kind, kind: s.by_kind.get(kind, 0) + 1},
                                  by_reason={**s.by_reason, kind: s.by_reason.get(kind, 0) + n})
        self._said(kind, n)
        if first:
            log.warning("trace export to %s failed (%s): %s; %d spans dropped. Further %s failures are counted, "
                        "not logged.", self.name, kind.value, detail, n, kind.value)
        return SpanExportResult.FAILURE

    @property
    def stats(self) -> ExportStats:
        return self._stats


class _CountingExporter(SpanExporter):
    def __init__(self, name: str, sinks: LossSinks | None = None) -> None:
        self._counters = _Counters(name, sinks)

    @property
    def name(self) -> str:
        return self._counters.name

    def stats(self) -> ExportStats:
        """A snapshot of the counters."""
        return self._counters.stats

    def lost(self, n: int, reason: FailureKind) -> None:
        """Count ``n`` spans this exporter never received as lost (found at close: see ``TraceHandles.close``),
        and say the minute's drops now."""
        if n > 0:
            self._counters.dropped(n, reason)
        if self._counters.sinks.log is not None:
            self._counters.sinks.log.flush()

    @property
    def exported_spans(self) -> int:
        return self._counters.stats.exported_spans

    @property
    def dropped_spans(self) -> int:
        return self._counters.stats.dropped_spans

    @property
    def failures(self) -> int:
        return self._counters.stats.failures


class StoreSpanExporter(_CountingExporter):
    """Writes each export batch to a local trace store in one transaction.

    Args:
        store: the store; it connects on the first export, in the exporting thread.
        retry_s: how long a batch keeps retrying while another process holds the store's lock.
        sinks: where drops are counted besides the exporter's stats.
    """

    def __init__(self, store: TraceStoreProtocol, *, retry_s: float = 30.0, sinks: LossSinks | None = None) -> None:
        super().__init__(f"store {store.location}", sinks)
        self.store = store
        self.retry_s = retry_s
        self._shutdown = False
        self._set_aside = False
        self.last_failure: FailureKind | None = None

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._shutdown:
            return self._counters.dropped(len(spans), FailureKind.CLOSED)
        deadline, pause = time.monotonic() + self.retry_s, 0.05
        while True:
            try:
                self.store.write(spans)
            except Exception as exc:  # noqa: BLE001 - telemetry never breaks the work it observes
                kind = failure_kind(exc)
                if kind is FailureKind.LOCKED and time.monotonic() < deadline:
                    time.sleep(pause)
                    pause = min(pause * 2, 1.0)
                    continue
                if kind is FailureKind.CORRUPT and not self._set_aside and self._replace_damaged(exc):
                    continue
                self.last_failure = kind
                return self._counters.failed(kind, len(spans), exc)
            return self._counters.ok(len(spans))

    def _replace_damaged(self, exc: BaseException) -> bool:
        """Move a damaged store aside and start a new one (once per exporter); True when done."""
        self._set_aside = True
        return self.store.set_aside_damaged(exc)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True  # every export commits before returning

    def shutdown(self) -> None:
        self._shutdown = True
        if self._counters.sinks.log is not None:
            self._counters.sinks.log.flush()
        try:
            self.store.close()
        except Exception as exc:  # noqa: BLE001
            log.warning("closing the trace store %s failed: %s", self.store.location, exc)


class SafeExporter(_CountingExporter):
    """Wraps any exporter (OTLP) so its failures are caught, counted and logged once.

    After a failed export the wrapped exporter rests for ``cooldown_s``: batches
    in that time are dropped at once, so a dead collector costs one exporter
    timeout per cooldown rather than one per batch, and the processor's
    shutdown does not wait on it batch after batch. While exporting, the
    wrapped exporter's own log records are shown once per message.

    Args:
        inner: the exporter to protect.
        name: what the warnings call it (e.g. ``otlp http://collector:4318``).
        cooldown_s: rest after a failure; 0 retries every batch.
        clock: monotonic clock (for tests).
        sinks: where drops are counted besides the exporter's stats.
    """

    def __init__(self, inner: SpanExporter, name: str, *, cooldown_s: float = 30.0,
                 clock: Callable[[], float] = time.monotonic, sinks: LossSinks | None = None) -> None:
        super().__init__(name, sinks)
        self.inner = inner
        self.cooldown_s = cooldown_s
        self._clock = clock
        self._resume_at = float("-inf")
        self._quiet = _RepeatFilter(type(inner))

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        now = self._clock()
        if now < self._resume_at:
            return self._counters.dropped(len(spans), FailureKind.RESTING)
        try:
            with self._quiet:
                result = self.inner.export(spans)
        except Exception as exc:  # noqa: BLE001
            kind, detail = failure_kind(exc), f"{type(exc).__name__}: {exc}"
        else:
            if result is SpanExportResult.SUCCESS:
                return self._counters.ok(len(spans))
            said = self._quiet.first_message()
            kind, detail = FailureKind.REJECTED, f"the exporter gave up{f' ({said})' if said else ''}"
        self._resume_at = now + self.cooldown_s
        return self._counters.failed(kind, len(spans), detail)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        try:
            return bool(self.inner.force_flush(timeout_millis))
        except Exception:  # noqa: BLE001
            return False

    def stop_waiting(self) -> None:
        """Drop every batch from now on, at once: the process is exiting and waits for no collector."""
        self._resume_at = float("inf")

    def shutdown(self) -> None:
        if self._counters.sinks.log is not None:
            self._counters.sinks.log.flush()
        try:
            with self._quiet:
                self.inner.shutdown()
        except Exception as exc:  # noqa: BLE001
            log.warning("shutting down trace exporter %s failed: %s", self._counters.name, exc)
        finally:
            self._quiet.remove()


class _RepeatFilter(logging.Filter):
    """While active on a thread, keeps an exporter's own log records off the log.

    Its retries and their backoff, then its final error, would be several lines for
    one cause; the first message is kept, for the one warning ``SafeExporter`` writes.
    """

    def __init__(self, exporter_type: type) -> None:
        super().__init__()
        self._active = threading.local()
        self._first: str | None = None
        # The exporter logs through its modules' loggers (and their helpers'), all imported by now.
        modules = {c.__module__ for c in exporter_type.__mro__} | {
            name for name in logging.root.manager.loggerDict if name.startswith("opentelemetry.exporter")}
        self._loggers = [logging.getLogger(m) for m in sorted(modules) if m.startswith("opentelemetry.exporter")]
        for logger in self._loggers:
            logger.addFilter(self)

    def __enter__(self) -> None:
        self._active.on = True

    def __exit__(self, *exc: object) -> None:
        self._active.on = False

    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(self._active, "on", False):
            return True
        if self._first is None and record.levelno >= logging.WARNING:
            self._first = record.getMessage()[:300]
        return False

    def first_message(self) -> str | None:
        """The first warning the exporter logged since the last call (then forgotten)."""
        first, self._first = self._first, None
        return first

    def remove(self) -> None:
        for logger in self._loggers:
            logger.removeFilter(self)
