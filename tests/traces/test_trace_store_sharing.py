"""One trace store, several processes: reads never wait on a writer, prune works in short batches and gives
the space back, a damaged store is set aside and salvaged, a flush says whether every span was stored."""

from __future__ import annotations

import sqlite3
from dataclasses import replace

import pytest
from opentelemetry.sdk.trace.export import SpanExportResult
from trace_fixtures import MS, T0, FakeSearch, record

from searchtrace.home import Home
from searchtrace.traces import TraceSettings, TraceStore, make_tracer_provider
from searchtrace.traces.export.exporter import StoreSpanExporter
from searchtrace.traces.store import sqlite as store_module
from searchtrace.traces.store import sqlite_sql as sql
from searchtrace.traces.store.damage import damaged_copies, is_damaged
from searchtrace.traces.store.repair import salvage

S = 1000 * MS


def _fill(store: TraceStore, n: int, candidates: int = 100) -> list[str]:
    spans, ids = record(*(FakeSearch(start_ns=T0 + i * S, candidates=candidates) for i in range(n)))
    store.write(spans)
    return ids


@pytest.fixture
def store(tmp_path):
    s = TraceStore(tmp_path / "traces.sqlite")
    yield s
    s.close()


def test_reads_go_on_while_another_process_writes(store):
    ids = _fill(store, 3)
    writer = sqlite3.connect(store.path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
    try:
        reader = TraceStore(store.path, busy_timeout_ms=50)
        assert reader.count() == 3 and len(reader.list_traces()) == 3
        assert reader.load_trace(ids[0]) is not None and reader.stored(ids) == dict.fromkeys(ids, 11)
        reader.close()
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_reading_never_sets_up_a_store(tmp_path):
    path = tmp_path / "traces.sqlite"
    sqlite3.connect(path).close()  # an empty file: no schema yet
    reader = TraceStore(path)
    assert reader.count() == 0 and reader.list_traces() == [] and reader.load_trace("0" * 32) is None
    reader.close()
    assert path.stat().st_size == 0  # nothing was written


def test_prune_deletes_in_short_transactions(store, monkeypatch):
    _fill(store, 60, candidates=5)
    transactions = []
    real = sql.write_transaction

    def counting(conn):
        transactions.append(1)
        return real(conn)

    monkeypatch.setattr(store_module, "PRUNE_BATCH", 7)
    monkeypatch.setattr(sql, "write_transaction", counting)
    assert store.prune(keep_last=10, reclaim=False) == 50
    assert len(transactions) == 8  # 7 batches of 7 and one of 1
    assert store.count() == 10
    newest = [t.start_ns for t in store.list_traces()]
    assert newest == [T0 + i * S for i in range(59, 49, -1)]  # the newest ten kept


def _checkpointed_size(store: TraceStore) -> int:
    conn = sqlite3.connect(store.path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        conn.close()
    return store.path.stat().st_size


@pytest.mark.parametrize("way", ["vacuum", "incremental"])
def test_prune_gives_the_space_back(store, monkeypatch, way):
    """Little left: one VACUUM; much left: incremental steps. Either way the free pages go back."""
    if way == "incremental":
        monkeypatch.setattr("searchtrace.traces.store.sqlite.VACUUM_LIVE_PAGES", 0)
        monkeypatch.setattr(TraceStore, "_vacuum", staticmethod(lambda conn: pytest.fail("VACUUM used")))
    _fill(store, 400)
    before = _checkpointed_size(store)
    assert store.prune(keep_last=20) == 380
    conn = sqlite3.connect(store.path)
    try:
        assert conn.execute("PRAGMA freelist_count").fetchone()[0] == 0
    finally:
        conn.close()
    assert _checkpointed_size(store) < before * 0.2 and store.count() == 20 and store.integrity_check()


def test_a_damaged_store_is_set_aside_and_a_new_one_started(tmp_path, caplog):
    path = tmp_path / "traces.sqlite"
    path.write_bytes(b"this is not a database" * 200)
    exporter = StoreSpanExporter(TraceStore(path))
    spans, _ = record(FakeSearch())
    assert exporter.export(spans) is SpanExportResult.SUCCESS
    [aside] = damaged_copies(path)
    assert aside.read_bytes().startswith(b"this is not a database")
    assert TraceStore(path).count() == 1
    [warning] = [r.getMessage() for r in caplog.records if r.name in ("searchtrace.traces.export.exporter", "searchtrace.traces.store.damage")]
    assert "was damaged" in warning and "searchtrace traces repair" in warning


def _span_leaf_page(data: bytearray, trace_id: str) -> int:
    """The offset of a table leaf page (B-tree page type 13) holding one of ``trace_id``'s span rows (a stage
    span's name is in it; the traces table's rows name only the root)."""
    at = data.find(trace_id.encode())
    while at != -1:
        page = at // 4096 * 4096
        if page and data[page] == 0x0D and b"rerank" in data[page:page + 4096]:
            return page
        at = data.find(trace_id.encode(), at + 1)
    raise AssertionError(f"no table leaf page holds trace {trace_id}")


def test_repair_salvages_what_sqlite_can_read(tmp_path, capsys):
    """4 KB of random bytes in the middle: every row outside the damaged page is recovered, and the traces
    that lost spans are said to be partial, in the report and by ``traces show``."""
    import random

    from searchtrace.cli import main

    path = tmp_path / "traces.sqlite"
    store = TraceStore(path)
    ids = _fill(store, 200)
    total = store.stored(ids)
    store.close()
    data = bytearray(path.read_bytes())
    page = _span_leaf_page(data, ids[len(ids) // 2])  # a page of span rows, as a failing disk sector would be
    data[page:page + 4096] = random.Random(7).randbytes(4096)
    path.write_bytes(bytes(data))
    assert is_damaged(path)
    assert main(["traces", "repair", "--home", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("copied ") and " traces and " in out
    repaired = TraceStore(path)
    assert not is_damaged(path) and repaired.integrity_check()
    conn = sqlite3.connect(path)
    spans = conn.execute("SELECT count(*) FROM spans").fetchone()[0]
    assert len(repaired.stored(ids)) >= 0.95 * len(total) and spans >= 0.95 * sum(total.values()), (spans, out)
    partial = [t for t, recorded, stored in conn.execute(
        "SELECT trace_id, n_spans, (SELECT count(*) FROM spans s WHERE s.trace_id = t.trace_id) FROM traces t")
        if stored < recorded]
    conn.close()
    repaired.close()
    assert partial, out  # the damaged page held span rows: their traces are partial
    assert f"{len(partial)} traces are partial" in out
    assert main(["traces", "show", partial[0], "--home", str(tmp_path)]) == 0
    assert "partial:" in capsys.readouterr().err
    assert not damaged_copies(path)  # salvaged copies are renamed, not salvaged twice


def test_salvage_of_an_unreadable_file_copies_nothing(tmp_path):
    garbage = tmp_path / "old.sqlite"
    garbage.write_bytes(b"\x00" * 8192)
    store = TraceStore(tmp_path / "traces.sqlite")
    report = salvage(garbage, store)
    assert (report.traces, report.spans) == (0, 0)
    store.close()


def test_flush_store_says_whether_every_span_was_stored(tmp_path, monkeypatch):
    settings = replace(TraceSettings.resolve(environ={}), store_retry_s=0)
    provider, handles = make_tracer_provider(Home(tmp_path), settings)
    tracer = provider.get_tracer("t")
    from trace_fixtures import emulate_search

    trace_id = emulate_search(tracer, FakeSearch())
    assert handles.flush_store() is True and handles.store.stored([trace_id]) == {trace_id: 11}

    def full(_spans):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(handles.store, "write", full)
    emulate_search(tracer, FakeSearch(start_ns=T0 + S))
    assert handles.flush_store() is False
    assert handles.store_failure is not None and handles.store_failure.value == "disk_full"
    handles.shutdown()


def test_reading_a_damaged_store_says_it_is_damaged(tmp_path, capsys):
    """``traces list`` and ``show`` run an integrity check first: a damaged store is named, never read as whole."""
    import random

    from searchtrace.cli import main

    path = tmp_path / "traces.sqlite"
    store = TraceStore(path)
    ids = _fill(store, 200)
    store.close()
    assert main(["traces", "list", "--home", str(tmp_path)]) == 0
    capsys.readouterr()
    data = bytearray(path.read_bytes())
    page = _span_leaf_page(data, ids[len(ids) // 2])
    data[page:page + 4096] = random.Random(7).randbytes(4096)
    path.write_bytes(bytes(data))
    for command in (["traces", "list"], ["traces", "show", ids[0]]):
        assert main([*command, "--home", str(tmp_path)]) == 1
        err = capsys.readouterr().err
        assert str(path) in err and "malformed" in err and "searchtrace traces repair" in err
        assert len(err.strip().splitlines()) == 1
