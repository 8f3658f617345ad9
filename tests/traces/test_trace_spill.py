"""The shared store's held spans survive a kill: spilled to a bounded file in the home, written by the next
process from the same home (issue 35: with the store down and the server killed, 754 answered searches lost
their traces, counted nowhere). A store that raises ``BackendUnavailable`` stands in for PostgreSQL down; the
system test ``tests/system/test_trace_spill_kill.py`` does it with a real one and a real ``kill -9``."""

from __future__ import annotations

import logging

from trace_fixtures import T0, FakeSearch, record

from searchtrace.errors import BackendUnavailable
from searchtrace.traces.export.buffered import BufferedStoreExporter
from searchtrace.traces.export.exporter import LossSinks
from searchtrace.traces.export.losses import LossLedger
from searchtrace.traces.export.spill import SpillFile, span_from_json, span_to_json
from searchtrace.traces.store.sqlite import TraceStore

S = 10**9


class Down:
    """A shared store out of reach: every write refused as PostgreSQL's absence is."""

    location = "postgresql://db.example/traces"

    def write(self, spans):
        raise BackendUnavailable("trace store unreachable")

    def note_dropped(self, *args):
        raise BackendUnavailable("trace store unreachable")


def _searches(n: int, first: int = 0):
    return [record(FakeSearch(start_ns=T0 + (first + i) * S)) for i in range(n)]


def test_a_span_read_back_from_the_spill_is_stored_as_the_original(tmp_path):
    spans, [trace_id] = record(FakeSearch(degraded=("graph",), error_code=None))
    original, copy = TraceStore(tmp_path / "a.sqlite"), TraceStore(tmp_path / "b.sqlite")
    original.write(spans)
    copy.write([span_from_json(span_to_json(s)) for s in spans])
    assert copy.load_trace(trace_id) == original.load_trace(trace_id)
    original.close()
    copy.close()


def test_held_spans_of_a_killed_process_are_written_by_the_next_one(tmp_path, caplog):
    folder = tmp_path / "traces.spill"
    killed = BufferedStoreExporter(Down(), spill=SpillFile(folder), retry_s=60)
    searches = _searches(5)
    for spans, _ in searches:
        killed.export(spans)
    assert killed.held == 55
    killed.spill.forget()  # what a kill does to the file: closed, its lock gone, nothing marked stored
    store = TraceStore(tmp_path / "traces.sqlite")
    ledger = LossLedger(tmp_path / "traces.losses")
    with caplog.at_level(logging.WARNING):
        after = BufferedStoreExporter(store, spill=SpillFile(folder), sinks=LossSinks(ledger))
        assert after.recover() == 55
        assert after.force_flush(10_000) is True
    ids = [trace_id for _, [trace_id] in searches]
    assert store.stored(ids) == {trace_id: 11 for trace_id in ids}
    assert any("stopped before storing them" in r.getMessage() for r in caplog.records)
    after.shutdown()
    assert list(folder.iterdir()) == [] and ledger.read() == []  # nothing left, nothing lost
    store.close()


def test_batches_stored_before_the_kill_are_not_written_again_and_a_torn_line_is_counted(tmp_path):
    folder = tmp_path / "traces.spill"
    spill = SpillFile(folder)
    batches = [spans for spans, _ in _searches(3)]
    assert [spill.hold(b) for b in batches] == [1, 2, 3]
    spill.stored([1])
    assert spill.path is not None
    with open(spill.path, "ab") as f:  # the kill came in the middle of a line
        f.write(b"H 4 11 [{\"name\":\"sea")
    spill.forget()
    found = SpillFile(folder).recover()
    assert (found.files, found.unreadable_spans) == (1, 11)
    assert [[s.context.span_id for s in b] for b in found.batches] == [
        [s.context.span_id for s in b] for b in batches[1:]]
    assert list(folder.iterdir()) == []


def test_a_live_process_keeps_its_spill(tmp_path):
    folder = tmp_path / "traces.spill"
    live = SpillFile(folder)
    live.hold(_searches(1)[0][0])
    assert SpillFile(folder).recover().files == 0 and live.path is not None and live.path.exists()
    live.close()
    assert list(folder.iterdir()) == []


def test_what_the_spill_bound_refuses_is_dropped_and_counted_as_lost(tmp_path, capsys):
    from searchtrace.cli import main

    size = len(_line(_searches(1)[0][0]))
    spill = SpillFile(tmp_path / "traces.spill", max_bytes=3 * size + 10)  # three batches fit, the fourth not
    ledger = LossLedger(tmp_path / "traces.losses")
    exporter = BufferedStoreExporter(Down(), spill=spill, retry_s=60, sinks=LossSinks(ledger))
    for spans, _ in _searches(5):
        exporter.export(spans)
    assert exporter.held == 33 and exporter.overflowed == 22
    assert spill.path is not None and spill.path.stat().st_size <= spill.max_bytes
    spill.forget()
    [loss] = ledger.read()
    assert (loss.reason, loss.spans, loss.events, loss.target) == (
        "buffer_full", 22, 2, "store postgresql://db.example/traces")
    assert main(["traces", "status", "--home", str(tmp_path)]) == 0
    assert "lost      22 spans: buffer_full (2 times)\n            to    store postgresql://db.example/traces" \
        in capsys.readouterr().out


def _line(spans) -> bytes:
    import json

    body = json.dumps([span_to_json(s) for s in spans], separators=(",", ":"), ensure_ascii=False)
    return f"H 1 {len(spans)} {body}\n".encode()


def test_spans_still_held_at_exit_are_left_for_the_next_start_not_lost(tmp_path, caplog):
    folder = tmp_path / "traces.spill"
    ledger = LossLedger(tmp_path / "traces.losses")
    exiting = BufferedStoreExporter(Down(), spill=SpillFile(folder), retry_s=60, shutdown_s=0.1,
                                    sinks=LossSinks(ledger))
    searches = _searches(2)
    for spans, _ in searches:
        exiting.export(spans)
    with caplog.at_level(logging.WARNING):
        exiting.shutdown()
    assert any("22 spans kept in" in r.getMessage() for r in caplog.records)
    assert exiting.stats().dropped_spans == 0 and ledger.read() == []
    store = TraceStore(tmp_path / "traces.sqlite")
    after = BufferedStoreExporter(store, spill=SpillFile(folder))
    after.export(_searches(1, first=9)[0][0])  # the first export of the next process takes them too
    assert after.force_flush(10_000) is True
    assert len(store.stored([trace_id for _, [trace_id] in searches])) == 2
    after.shutdown()
    store.close()


def test_a_batch_spilled_for_one_store_is_never_written_to_another(tmp_path):
    from searchtrace.traces.export.spill import spill_folder

    root = tmp_path / "traces.spill"
    a, b = "postgresql://u:****@db-a:5432/traces", "postgresql://u:****@db-b:5432/traces"
    assert spill_folder(root, a) == spill_folder(root, a) != spill_folder(root, b)
    killed = SpillFile(spill_folder(root, a))
    killed.hold(_searches(1)[0][0])
    killed.forget()
    assert SpillFile(spill_folder(root, b)).recover().files == 0
    assert SpillFile(spill_folder(root, a)).recover().files == 1


def test_a_line_the_disk_had_no_room_for_is_cut_off_so_the_next_ones_stay_readable(tmp_path, monkeypatch):
    import os

    import pytest

    from searchtrace.traces.export import spill as spill_module

    folder = tmp_path / "traces.spill"
    spill = SpillFile(folder)
    batches = [spans for spans, _ in _searches(3)]
    spill.hold(batches[0])
    real = os.write
    calls = []

    def full(fd, data):
        calls.append(len(data))
        if len(calls) == 1:
            return real(fd, data[:100])  # a short write, then ENOSPC
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(spill_module.os, "write", full)
    with pytest.raises(OSError):
        spill.hold(batches[1])
    monkeypatch.setattr(spill_module.os, "write", real)
    spill.hold(batches[2])
    spill.forget()
    found = SpillFile(folder).recover()
    assert found.unreadable_spans == 0
    assert [[s.context.span_id for s in b] for b in found.batches] == [
        [s.context.span_id for s in b] for b in (batches[0], batches[2])]
