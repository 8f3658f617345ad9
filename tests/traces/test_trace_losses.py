"""Every span lost on its way to a store or collector is counted where ``traces status`` reads it (issue 35:
45,738 spans dropped for a full disk showed in ``/v1/stats`` only), and said on the log once a minute while
drops last, never once per span."""

from __future__ import annotations

import logging
import multiprocessing
import sqlite3
from dataclasses import replace

import pytest
from trace_fixtures import T0, FakeSearch, emulate_search, record

from searchtrace.cli import main
from searchtrace.errors import SearchtraceError
from searchtrace.home import Home
from searchtrace.traces.export.droplog import DropLog
from searchtrace.traces.export.exporter import LossSinks, StoreSpanExporter
from searchtrace.traces.export.losses import SLOT, SLOTS, LossLedger
from searchtrace.traces.export.provider import TraceSettings, make_tracer_provider
from searchtrace.traces.store.sqlite import TraceStore

S = 10**9


def _full(_spans):
    raise sqlite3.OperationalError("database or disk is full")


def test_spans_dropped_for_a_full_disk_show_in_traces_status_and_agree_with_the_stats(tmp_path, monkeypatch, capsys):
    settings = replace(TraceSettings.resolve(environ={}), store_retry_s=0)
    provider, handles = make_tracer_provider(Home(tmp_path), settings)
    tracer = provider.get_tracer("t")
    emulate_search(tracer, FakeSearch())
    assert handles.flush_store() is True  # the first export finds room, and makes the losses file whole
    monkeypatch.setattr(handles.store, "write", _full)
    for i in range(1, 4):  # three searches, three export batches: 33 spans dropped
        emulate_search(tracer, FakeSearch(start_ns=T0 + i * S))
        assert handles.flush_store() is False
    status = handles.store_status()
    handles.shutdown()
    assert status is not None and status["droppedSpans"] == 33
    assert status["droppedByReason"] == {"disk_full": 33}  # /v1/stats's figures, the same as the file's

    assert main(["traces", "status", "--home", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(out) if line.startswith("lost "))
    assert out[at] == "lost      33 spans: disk_full (3 times)", out
    assert out[at + 1] == f"            to    store {tmp_path / 'traces.sqlite'}"
    assert out[at + 2].startswith("            from  20") and out[at + 2].endswith(" UTC")
    assert all(len(line) <= 80 for line in out if not line.startswith(("store", "            to")))


def test_traces_status_says_when_nothing_was_lost(tmp_path, capsys):
    assert main(["traces", "status", "--home", str(tmp_path)]) == 0
    assert "lost      none counted\n" in capsys.readouterr().out


def test_the_losses_file_is_made_whole_once_so_a_full_disk_can_still_be_counted(tmp_path):
    ledger = LossLedger(tmp_path / "traces.losses")
    assert ledger.prepare()
    size = ledger.path.stat().st_size
    assert size == SLOT * (SLOTS + 1)
    for i in range(50):
        assert ledger.add("disk_full" if i % 2 else "buffer_full", "store /x", 7, now_ns=T0 + i)
    assert ledger.path.stat().st_size == size  # counting rewrote lines in place: no new block was needed
    [buffer_full, disk_full] = sorted(ledger.read(), key=lambda x: x.reason)
    assert (disk_full.spans, disk_full.events, disk_full.first_ns, disk_full.last_ns) == (175, 25, T0 + 1, T0 + 49)
    assert (buffer_full.spans, buffer_full.events) == (175, 25)


def test_a_destination_name_too_long_for_a_line_is_cut_the_same_way_each_time(tmp_path):
    ledger = LossLedger(tmp_path / "traces.losses")
    target = "store /" + "é" * 200
    for n in (1, 10**12):  # a wider count leaves the name's room unchanged: still one line
        ledger.add("disk_full", target, n)
    [loss] = ledger.read()
    assert loss.spans == 10**12 + 1 and target.startswith(loss.target) and len(loss.target.encode()) <= 120


def _count(path: str, n: int) -> None:
    ledger = LossLedger(path)
    for _ in range(n):
        ledger.add("rejected", "otlp http://collector:4318", 3)


def test_processes_counting_at_once_lose_no_count(tmp_path):
    path = str(tmp_path / "traces.losses")
    ctx = multiprocessing.get_context("fork")
    workers = [ctx.Process(target=_count, args=(path, 200)) for _ in range(2)]
    for w in workers:
        w.start()
    _count(path, 200)
    for w in workers:
        w.join(60)
    assert [w.exitcode for w in workers] == [0, 0]
    [loss] = LossLedger(path).read()
    assert (loss.spans, loss.events) == (3 * 600, 600)


def test_a_file_that_is_not_a_losses_file_is_named_not_read(tmp_path, capsys):
    path = tmp_path / "traces.losses"
    path.write_text("something else\n")
    with pytest.raises(SearchtraceError, match="traces.losses: not a trace losses file"):
        LossLedger(path).read()
    path.unlink()
    LossLedger(path).prepare()
    path.write_bytes(path.read_bytes()[:SLOT] + b"12\tnot a number\n")
    with pytest.raises(SearchtraceError, match=r"traces\.losses, line 2: not a loss record"):
        LossLedger(path).read()
    assert main(["traces", "status", "--home", str(tmp_path)]) == 1
    assert "traces.losses, line 2: not a loss record" in capsys.readouterr().err


# -- one line a minute -------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "searchtrace.traces.export.droplog"]


def test_drops_are_said_once_a_minute_with_the_total_since_start(caplog):
    clock = Clock()
    drops = DropLog(clock=clock)
    with caplog.at_level(logging.WARNING):
        for t in range(0, 60, 5):  # a batch every 5 s for a minute: nothing said yet
            clock.now = 1000.0 + t
            drops.dropped("disk_full", 512)
        assert _lines(caplog) == []
        clock.now = 1060.0
        drops.dropped("disk_full", 512)  # the minute is over: its line, then this drop starts the next
        assert _lines(caplog) == ["traces: 6,144 spans dropped in the last minute (disk_full); 6,144 since start"]
        clock.now = 1090.0
        drops.dropped("buffer_full", 10)
        drops.tick()
        assert len(_lines(caplog)) == 1
        clock.now = 1121.0
        drops.tick()  # no drop now, but the minute that had some is over
        assert _lines(caplog)[1:] == ["traces: 522 spans dropped in the last minute (buffer_full 10, disk_full "
                                      "512); 6,666 since start"]
        clock.now = 1500.0
        drops.tick()
        drops.flush()  # nothing dropped since: nothing said
    assert len(_lines(caplog)) == 2


def test_a_store_exporter_on_a_full_disk_logs_a_line_a_minute_not_a_line_a_batch(tmp_path, caplog):
    clock = Clock()
    store = TraceStore(tmp_path / "traces.sqlite")
    store.write = _full  # type: ignore[method-assign]
    exporter = StoreSpanExporter(store, retry_s=0, sinks=LossSinks(LossLedger(tmp_path / "traces.losses"),
                                                                   DropLog(clock=clock)))
    spans = record(FakeSearch())[0]
    with caplog.at_level(logging.WARNING):
        for second in range(0, 180):  # a batch a second for three minutes
            clock.now = 1000.0 + second
            exporter.export(spans)
        exporter.shutdown()
    lines = _lines(caplog)
    assert lines == [f"traces: 660 spans dropped in the last minute (disk_full); {660 * k} since start"
                     .replace("1320", "1,320").replace("1980", "1,980") for k in (1, 2, 3)], lines
    [loss] = LossLedger(tmp_path / "traces.losses").read()
    assert (loss.reason, loss.spans, loss.events) == ("disk_full", 180 * 11, 180)


def test_spans_the_batch_queue_had_no_room_for_are_counted_at_close(tmp_path, monkeypatch):
    """The SDK's batch processor drops the oldest span when its queue is full, and counts it nowhere: at close,
    what ended and was neither stored, dropped nor kept is counted as ``queue_full``."""
    import threading

    monkeypatch.setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "4")
    settings = replace(TraceSettings.resolve(environ={}), max_queue_size=4, schedule_delay_ms=60_000)
    provider, handles = make_tracer_provider(Home(tmp_path), settings)
    release, write = threading.Event(), handles.store.write

    def slow(spans):
        release.wait(30)
        return write(spans)

    monkeypatch.setattr(handles.store, "write", slow)
    trace_id = emulate_search(provider.get_tracer("t"), FakeSearch())  # 11 spans: at most 4 out, 4 queued
    release.set()
    handles.close()
    stored = TraceStore(tmp_path / "traces.sqlite").stored([trace_id]).get(trace_id, 0)
    [loss] = LossLedger(tmp_path / "traces.losses").read()
    assert loss.reason == "queue_full" and loss.spans == 11 - stored and loss.spans >= 3, (loss, stored)
