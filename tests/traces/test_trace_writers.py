"""A trace store opened for writing is quick-checked first, and set aside when damaged.

Issue 23: a damaged store went on being written, listed and shown as if whole. ``traces list`` and
``show`` check it; a writer checks it too before its first write (issue 35: not only when the last
one stopped uncleanly, ``kill -9``), and sets a damaged file aside, saying so, instead of adding to it.
"""

from __future__ import annotations

import logging
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

from test_trace_store_sharing import _span_leaf_page
from trace_fixtures import FakeSearch, record

from searchtrace.traces.store import damage
from searchtrace.traces.store.damage import damaged_copies
from searchtrace.traces.store.sqlite import TraceStore
from searchtrace.traces.store.writers import register

TESTS = Path(__file__).resolve().parents[1]

WRITER = r"""
import os, signal, sys
sys.path[:0] = [sys.argv[2], sys.argv[3]]
from trace_fixtures import FakeSearch, record
from searchtrace.traces.store.sqlite import TraceStore

store = TraceStore(sys.argv[1])
ids = []
for i in range(150):
    spans, [trace_id] = record(FakeSearch(run_id="w", start_ns=10**18 + i, candidates=40))
    store.write(spans)
    ids.append(trace_id)
print(" ".join(ids), flush=True)
if sys.argv[4] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
store.close()
"""


def _write_then(path: Path, end: str) -> tuple[list[str], int]:
    done = subprocess.run([sys.executable, "-c", WRITER, str(path), str(TESTS), str(TESTS.parent), end],
                          capture_output=True, text=True, timeout=120)
    return done.stdout.split(), done.returncode


def _damage(path: Path, trace_id: str) -> None:
    data = bytearray(path.read_bytes())
    page = _span_leaf_page(data, trace_id)
    data[page:page + 4096] = random.Random(3).randbytes(4096)
    path.write_bytes(bytes(data))


def _checkpointed(path: Path) -> None:
    import sqlite3

    conn = sqlite3.connect(path)  # the killed writer's commits are in the WAL: fold them into the file
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    conn.close()


def test_a_store_damaged_after_a_killed_writer_is_set_aside_before_the_next_write(tmp_path, caplog):
    path = tmp_path / "traces.sqlite"
    ids, code = _write_then(path, "kill")
    assert code == -signal.SIGKILL and len(ids) == 150
    _checkpointed(path)
    _damage(path, ids[75])
    store = TraceStore(path)
    spans, [new_id] = record(FakeSearch(run_id="after"))
    with caplog.at_level(logging.WARNING):
        store.write(spans)
    [aside] = damaged_copies(path)
    warnings = [r.getMessage() for r in caplog.records if r.name == "searchtrace.traces.store.damage"]
    assert len(warnings) == 1 and "was damaged" in warnings[0] and str(aside) in warnings[0], warnings
    assert store.stored([new_id, *ids]) == {new_id: len(spans)}  # a new store, nothing written on the old
    store.close()


def test_after_a_clean_close_an_untouched_store_is_not_read_again_and_a_touched_one_is(tmp_path, monkeypatch):
    """A writer that closed cleanly records the state it left the file in; the next writer's first write
    checks only a file changed since (on a store of a million traces the check reads gigabytes)."""
    path = tmp_path / "traces.sqlite"
    ids, code = _write_then(path, "close")
    assert code == 0
    checked = []
    real = damage.is_damaged
    monkeypatch.setattr(damage, "is_damaged", lambda p: checked.append(p) or real(p))
    store = TraceStore(path)
    store.write(record(FakeSearch(run_id="after"))[0])
    store.close()
    assert checked == []  # untouched since the clean close: not read again
    later = path.stat().st_mtime_ns + 10**9
    os.utime(path, ns=(later, later))  # touched since (an edit, a copy put in its place)
    store = TraceStore(path)
    store.write(record(FakeSearch(run_id="touched"))[0])
    store.close()
    assert checked == [path] and not damaged_copies(path) and len(TraceStore(path).stored(ids)) == 150


def test_a_store_damaged_in_its_middle_after_a_clean_close_is_set_aside_by_the_next_search(
        tmp_path, caplog, capsys):
    """Issue 35: a store damaged in its middle (a page of span rows) took 848 more searches, which readers
    then refused with it. A search's writer checks as readers do: it sets the file aside, writes to a new
    one and says so, once; ``traces status`` names the copy set aside."""
    from dataclasses import replace

    from trace_fixtures import emulate_search

    from searchtrace.cli import main
    from searchtrace.home import Home
    from searchtrace.traces import TraceSettings, make_tracer_provider

    path = tmp_path / "traces.sqlite"
    ids, code = _write_then(path, "close")
    assert code == 0 and len(ids) == 150
    _damage(path, ids[75])
    assert damage.is_damaged(path)
    provider, handles = make_tracer_provider(Home(tmp_path), replace(TraceSettings.resolve(environ={}),
                                                                     store_retry_s=0))
    with caplog.at_level(logging.WARNING):
        new_id = emulate_search(provider.get_tracer("t"), FakeSearch(run_id="after"))
        assert handles.flush_store() is True
        second = emulate_search(provider.get_tracer("t"), FakeSearch(run_id="after", start_ns=10**18))
        assert handles.flush_store() is True
    handles.shutdown()
    [aside] = damaged_copies(path)
    said = [r.getMessage() for r in caplog.records if r.name == "searchtrace.traces.store.damage"]
    assert len(said) == 1 and "was damaged" in said[0] and "opened it to write" in said[0], said
    assert str(aside) in said[0]
    assert not damage.is_damaged(path)
    assert TraceStore(path).stored([new_id, second, *ids]) == {new_id: 11, second: 11}
    capsys.readouterr()
    assert main(["traces", "status", "--home", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "traces    2\n" in out and f"set aside {aside.name} (damaged;" in out, out


def test_after_a_killed_writer_an_intact_store_is_checked_and_kept(tmp_path, monkeypatch):
    path = tmp_path / "traces.sqlite"
    ids, _ = _write_then(path, "kill")
    checked = []
    real = damage.is_damaged
    monkeypatch.setattr(damage, "is_damaged", lambda p: checked.append(p) or real(p))
    store = TraceStore(path)
    store.write(record(FakeSearch(run_id="after"))[0])
    assert checked == [path] and not damaged_copies(path) and len(store.stored(ids)) == 150
    store.close()


def test_a_live_writers_mark_is_not_taken_for_abandoned(tmp_path):
    store = tmp_path / "traces.sqlite"
    first = register(store)
    assert first is not None and first.unclean == 0
    second = register(store)  # another open file: its lock conflicts as another process's would
    assert second is not None and second.unclean == 0 and first.path.exists()
    abandoned = first.path.with_name("12345-deadbeef")
    abandoned.write_text("")  # a marker nobody holds: a writer that ended without closing
    third = register(store)
    assert third is not None and third.unclean == 1 and not abandoned.exists()
    for mark in (first, second, third):
        mark.release()
    assert sorted(p.name for p in first.path.parent.iterdir()) == [".lock"]


def test_a_page_damaged_under_a_long_running_writer_is_found_at_its_next_check(tmp_path, caplog):
    """The writer's first write checked the file; a page damaged after that (a failing disk, a bad copy over
    it) is found at the next check, every 10 minutes by the writer's clock, and the file set aside then."""
    from searchtrace.traces.store.damage import CHECK_EVERY_S, Recheck

    now = [0.0]
    path = tmp_path / "traces.sqlite"
    store = TraceStore(path, recheck=Recheck(clock=lambda: now[0]))
    ids = []
    for i in range(150):
        spans, [trace_id] = record(FakeSearch(run_id="w", start_ns=10**18 + i, candidates=40))
        store.write(spans)
        ids.append(trace_id)
    _checkpointed(path)
    _damage(path, ids[75])
    spans, [before] = record(FakeSearch(run_id="before the check"))
    now[0] = CHECK_EVERY_S - 1
    store.write(spans)  # not due yet: written into the damaged file
    assert not damaged_copies(path)
    now[0] = CHECK_EVERY_S
    spans, [after] = record(FakeSearch(run_id="after the check"))
    with caplog.at_level(logging.WARNING):
        store.write(spans)
    [aside] = damaged_copies(path)
    said = [r.getMessage() for r in caplog.records if r.name == "searchtrace.traces.store.damage"]
    assert len(said) == 1 and "checked it again" in said[0] and str(aside) in said[0], said
    assert store.stored([after, before, *ids]) == {after: len(spans)}
    assert not damage.is_damaged(path)
    store.close()
