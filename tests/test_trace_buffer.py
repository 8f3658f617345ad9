"""Spans for a shared store that goes away: held in a bounded buffer, written when it is back, the rest
counted as dropped, in the exporter and in the store (a real PostgreSQL, stopped and started)."""

from __future__ import annotations

import time

import pytest
from trace_fixtures import MS, T0, FakeSearch, record

from searchtrace.cli import migrations
from searchtrace.database import Database, StoreUrl, migrate
from searchtrace.traces.buffered import BufferedStoreExporter
from searchtrace.traces.postgres import PostgresTraceStore

S = 1000 * MS


@pytest.fixture
def shared(stoppable_postgres):
    url = stoppable_postgres.new_database()
    db = Database(StoreUrl(url), timeout=1.0)
    migrate(db, migrations())
    yield stoppable_postgres, PostgresTraceStore(db)
    db.close()
    if not _up(stoppable_postgres):  # a test that failed while the server was stopped
        stoppable_postgres.start()
    stoppable_postgres.drop_database(url)


def _up(server) -> bool:
    import psycopg

    try:
        psycopg.connect(server.admin_url, connect_timeout=2).close()
    except psycopg.OperationalError:
        return False
    return True


def _searches(n: int, first: int = 0) -> tuple[list, list[str]]:
    return record(*(FakeSearch(start_ns=T0 + (first + i) * S) for i in range(n)))


def _wait(predicate, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_batches_written_while_up_held_while_down_and_written_after(shared):
    server, store = shared
    exporter = BufferedStoreExporter(store, capacity=10_000, retry_s=0.05, max_retry_s=0.2)
    before, before_ids = _searches(3)
    exporter.export(before)
    assert store.count() == 3 and exporter.held == 0

    server.stop()
    during, during_ids = _searches(20, first=3)
    started = time.monotonic()
    for i in range(0, len(during), 11):  # one search per export batch
        exporter.export(during[i:i + 11])
    assert time.monotonic() - started < 5  # the first failure waits for the pool (1 s here); the rest are held
    assert exporter.held == len(during)
    assert exporter.force_flush(200) is False  # not stored: a flush says so

    server.start()
    assert _wait(lambda: exporter.held == 0), f"{exporter.held} spans still held"
    assert exporter.force_flush(1000) is True
    stored = store.stored(before_ids + during_ids)
    assert set(stored) == set(before_ids + during_ids) and set(stored.values()) == {11}
    assert exporter.stats().dropped_spans == 0 and exporter.overflowed == 0
    assert exporter.stats().exported_spans == len(before) + len(during)
    exporter.shutdown()


def test_what_the_buffer_cannot_hold_is_dropped_counted_and_said_in_the_store(shared, capsys):
    server, store = shared
    exporter = BufferedStoreExporter(store, capacity=55, retry_s=0.05, max_retry_s=0.2)
    server.stop()
    spans, ids = _searches(8)
    for i in range(0, len(spans), 11):
        exporter.export(spans[i:i + 11])
    assert exporter.held == 55 and exporter.overflowed == 33  # five searches fit, three did not
    server.start()
    assert _wait(lambda: exporter.held == 0 and store.dropped() == 33), (exporter.held, exporter.overflowed)
    stored = store.stored(ids)
    assert len(stored) == 5 and sum(stored.values()) + exporter.overflowed == len(spans)
    assert exporter.stats().dropped_spans == 33
    exporter.shutdown()

    from searchtrace.cli import main

    assert main(["traces", "status", "--store", store.db.url.conninfo]) == 0
    out = capsys.readouterr().out
    assert "traces    5" in out and "dropped   33 spans" in out and server.password not in out


def test_closing_gives_up_what_the_store_does_not_take_in_time_and_counts_it(shared):
    server, store = shared
    exporter = BufferedStoreExporter(store, capacity=1_000, retry_s=0.05, max_retry_s=0.2, shutdown_s=0.5)
    server.stop()
    spans, _ = _searches(2)
    exporter.export(spans)
    started = time.monotonic()
    exporter.shutdown()
    assert time.monotonic() - started < 5
    assert exporter.held == 0 and exporter.stats().dropped_spans == len(spans)
    server.start()


def test_a_connection_a_restart_broke_is_replaced_before_an_idle_reader_uses_it(shared):
    server, quick = shared
    store = PostgresTraceStore(Database(quick.db.url))  # the default wait for a connection, not the fixture's 1 s
    spans, _ = _searches(1)
    store.write(spans)  # the pool now holds a connection
    server.stop()
    server.start()
    time.sleep(1.2)  # idle longer than the pool's check threshold
    assert store.count() == 1  # the first use after the restart succeeds
    store.db.close()
