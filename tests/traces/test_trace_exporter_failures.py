"""A locked store, a full disk or a dead collector: counted, logged once, never felt by the search."""

from __future__ import annotations

import errno
import socket
import sqlite3
import threading
import time
from dataclasses import replace

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from trace_fixtures import FakeSearch, emulate_search, record

from searchtrace.home import Home
from searchtrace.traces.export.exporter import FailureKind, SafeExporter, StoreSpanExporter
from searchtrace.traces.export.provider import TraceSettings, make_tracer_provider
from searchtrace.traces.store.sqlite import TraceStore

SUCCESS, FAILURE = SpanExportResult.SUCCESS, SpanExportResult.FAILURE


def ours(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name in ("searchtrace.traces.export.exporter", "searchtrace.traces.store.damage")]


@pytest.fixture
def store(tmp_path):
    s = TraceStore(tmp_path / "traces.sqlite", busy_timeout_ms=50).open()
    yield s
    s.close()


@pytest.fixture
def spans():
    return record(FakeSearch())[0]


def test_locked_store_is_counted_and_logged_once(store, spans, caplog):
    exporter = StoreSpanExporter(store, retry_s=0)  # no waiting: one busy timeout per write
    blocker = sqlite3.connect(store.path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
    try:
        t = time.perf_counter()
        results = [exporter.export(spans), exporter.export(spans)]
        elapsed = time.perf_counter() - t
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert results == [FAILURE, FAILURE]
    assert (exporter.failures, exporter.dropped_spans, exporter.exported_spans) == (2, 22, 0)
    assert exporter.stats().by_kind == {FailureKind.LOCKED: 2}
    assert len(ours(caplog)) == 1 and "(locked)" in ours(caplog)[0] and "database is locked" in ours(caplog)[0]
    assert elapsed < 2.0  # two busy timeouts of 50 ms, not a hang
    assert exporter.export(spans) is SUCCESS  # the lock is gone: writes resume
    assert (exporter.exported_spans, store.count()) == (11, 1)


def test_a_store_locked_for_a_while_is_waited_for(store, spans, caplog):
    """Another process holding the write lock for longer than the busy timeout: the batch is retried, not lost."""
    exporter = StoreSpanExporter(store, retry_s=10)
    blocker = sqlite3.connect(store.path, isolation_level=None, check_same_thread=False)
    blocker.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.6, lambda: blocker.execute("ROLLBACK"))  # 12 busy timeouts of 50 ms
    release.start()
    try:
        assert exporter.export(spans) is SUCCESS
    finally:
        release.join()
        blocker.close()
    assert (exporter.failures, exporter.exported_spans, store.count()) == (0, 11, 1)
    assert ours(caplog) == []


@pytest.mark.parametrize("error", [sqlite3.OperationalError("database or disk is full"),
                                   OSError(errno.ENOSPC, "No space left on device")])
def test_disk_full_is_counted_and_logged_once(store, spans, caplog, monkeypatch, error):
    def full(_spans):
        raise error

    monkeypatch.setattr(store, "write", full)
    exporter = StoreSpanExporter(store)
    assert [exporter.export(spans) for _ in range(3)] == [FAILURE] * 3
    assert exporter.stats().by_kind == {FailureKind.DISK_FULL: 3}
    assert (exporter.failures, exporter.dropped_spans) == (3, 33)
    assert len(ours(caplog)) == 1 and "(disk_full)" in ours(caplog)[0]


def test_a_real_full_database_rolls_back_the_batch(store, caplog):
    exporter = StoreSpanExporter(store)
    assert exporter.export(record(FakeSearch())[0]) is SUCCESS
    conn = store._conn()  # cap the file at its current size: SQLite then reports SQLITE_FULL
    conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0] + 1}")
    big, _ = record(*(FakeSearch(start_ns=i, candidates=100) for i in range(20)))
    assert exporter.export(big) is FAILURE
    assert exporter.stats().by_kind == {FailureKind.DISK_FULL: 1}
    assert "database or disk is full" in ours(caplog)[0]
    assert store.count() == 1 and store.integrity_check()


def test_each_kind_is_logged_once(store, spans, caplog, monkeypatch):
    errors = iter([RuntimeError("boom"), sqlite3.OperationalError("database is locked"), RuntimeError("boom again"),
                   sqlite3.OperationalError("database is locked")])

    def failing(_spans):
        raise next(errors)

    monkeypatch.setattr(store, "write", failing)
    exporter = StoreSpanExporter(store, retry_s=0)
    for _ in range(4):
        assert exporter.export(spans) is FAILURE
    assert exporter.stats().by_kind == {FailureKind.UNEXPECTED: 2, FailureKind.LOCKED: 2}
    assert [m.split(": ")[0] for m in ours(caplog)] == [f"trace export to store {store.path} failed (unexpected)",
                                                      f"trace export to store {store.path} failed (locked)"]


def test_a_locked_store_does_not_slow_the_search(store):
    exporter = StoreSpanExporter(store, retry_s=0.2)
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=10))
    tracer = provider.get_tracer("searchtrace")
    blocker = sqlite3.connect(store.path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        t = time.perf_counter()
        for i in range(5):  # 55 spans; the searches themselves never wait on the store
            emulate_search(tracer, FakeSearch(start_ns=i, candidates=100))
        caller_s = time.perf_counter() - t
        provider.force_flush()
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
        provider.shutdown()
    assert caller_s < 0.5
    assert exporter.failures >= 1 and exporter.dropped_spans + exporter.exported_spans == 55


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_dead_otlp_endpoint(caplog):
    inner = OTLPSpanExporter(endpoint=f"http://127.0.0.1:{_closed_port()}/v1/traces", timeout=1)
    safe = SafeExporter(inner, "otlp dead")
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(safe, schedule_delay_millis=60_000))
    tracer = provider.get_tracer("searchtrace")
    try:
        t = time.perf_counter()
        for _ in range(50):
            tracer.start_span("dense").end()
        caller_s = time.perf_counter() - t
        t = time.perf_counter()
        provider.force_flush()  # one export of 50 spans, refused
        first_flush_s = time.perf_counter() - t
        for _ in range(50):
            tracer.start_span("dense").end()
        t = time.perf_counter()
        provider.force_flush()  # within the cooldown: dropped without calling the collector
        second_flush_s = time.perf_counter() - t
    finally:
        provider.shutdown()
    assert caller_s < 0.5
    assert first_flush_s < 5.0 and second_flush_s < 0.5
    assert (safe.failures, safe.dropped_spans, safe.exported_spans) == (1, 100, 0)
    assert safe.stats().by_kind == {FailureKind.REJECTED: 1}
    [warning] = ours(caplog)  # one line for the cause, the exporter's own first message in it
    assert warning.startswith("trace export to otlp dead failed (rejected): the exporter gave up (")
    assert warning.endswith(
        "; 50 spans dropped. Further rejected failures are counted, not logged.")
    assert [r for r in caplog.records if r.name.startswith("opentelemetry.exporter")] == []


class _Flaky(SpanExporter):
    def __init__(self, outcomes):
        self.outcomes, self.calls = list(outcomes), 0

    def export(self, spans):
        self.calls += 1
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def shutdown(self):
        raise RuntimeError("shutdown failed")

    def force_flush(self, timeout_millis=30000):
        raise RuntimeError("flush failed")


def test_safe_exporter_catches_raises_and_rests_after_a_failure(spans, caplog):
    now = [0.0]
    inner = _Flaky([RuntimeError("collector bug"), SUCCESS, FAILURE, SUCCESS])
    safe = SafeExporter(inner, "flaky", cooldown_s=10, clock=lambda: now[0])
    assert safe.export(spans) is FAILURE  # raised: caught
    now[0] = 5.0
    assert safe.export(spans) is FAILURE and inner.calls == 1  # resting: not called
    now[0] = 10.0
    assert safe.export(spans) is SUCCESS and inner.calls == 2
    assert safe.export(spans) is FAILURE  # reported FAILURE
    now[0] = 21.0
    assert safe.export(spans) is SUCCESS and inner.calls == 4
    assert (safe.exported_spans, safe.dropped_spans, safe.failures) == (22, 33, 2)
    assert safe.stats().by_kind == {FailureKind.UNEXPECTED: 1, FailureKind.REJECTED: 1}
    assert "RuntimeError: collector bug" in ours(caplog)[0] and len(ours(caplog)) == 2
    assert safe.force_flush() is False
    safe.shutdown()  # logs, does not raise
    assert "shutting down trace exporter flaky failed" in ours(caplog)[-1]


def test_the_provider_shrugs_off_a_locked_store_and_a_dead_collector(tmp_path, monkeypatch, caplog):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")  # seconds, in the Python exporters
    settings = replace(TraceSettings.resolve(otlp=True, protocol="http/protobuf"), store_retry_s=0.2)
    provider, handles = make_tracer_provider(Home(tmp_path), settings)
    blocker = sqlite3.connect(handles.store.open().path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    tracer = provider.get_tracer("searchtrace")
    try:
        t = time.perf_counter()
        for i in range(5):
            emulate_search(tracer, FakeSearch(start_ns=i, candidates=100))
        caller_s = time.perf_counter() - t
        handles.force_flush()
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    t = time.perf_counter()
    handles.shutdown()
    shutdown_s = time.perf_counter() - t
    store, otlp = (handles.exporters[0].stats(), handles.exporters[1].stats())
    assert caller_s < 0.5 and shutdown_s < 5.0
    assert store.by_kind == {FailureKind.LOCKED: store.failures} and store.dropped_spans + store.exported_spans == 55
    assert otlp.by_kind == {FailureKind.REJECTED: 1} and otlp.dropped_spans == 55
    assert sorted(m.split(": ")[0] for m in ours(caplog)) == [
        f"trace export to otlp http/protobuf http://127.0.0.1:{_port(handles)} failed (rejected)",
        f"trace export to store {handles.store.path} failed (locked)"]


def _port(handles) -> str:
    return handles.exporters[1].name.rsplit(":", 1)[1]
