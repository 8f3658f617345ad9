"""The judgments store: one contract for every store (``judgments.jsonl`` and PostgreSQL), then
``judgments.jsonl``'s durability and damage.

Concurrency runs real processes (forked); the kill tests run a child process
that is killed with SIGKILL, once at a chosen point inside a write and once at
a random moment of a stream of appends.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from searchtrace.cli import main, migrations
from searchtrace.database import StoreUrl, database, migrate
from searchtrace.errors import DataError, ValidationError
from searchtrace.evals.labels.judgments import JsonlStore, Judgment, JudgmentStore, Kind, PostgresJudgmentStore
from searchtrace.evals.labels.judgments.records import record_from_json

REPO = Path(__file__).resolve().parents[2]
T0 = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)
FORK = multiprocessing.get_context("fork")


def judgment(doc: str, grade: int | None = 1, judge: str = "ana", **kw) -> Judgment:
    return Judgment("q1", doc, grade, judge, time=kw.pop("time", T0), **kw)


# -- the contract, run on every store ------------------------------------------------

def _postgres(request, tmp_path):
    """A store on a fresh, migrated database of the session's PostgreSQL server (skips when there is none)."""
    url = StoreUrl(request.getfixturevalue("pg_url"))
    migrate(database(url), migrations())
    return lambda: PostgresJudgmentStore(database(url), "mine")


STORES = {"jsonl": lambda request, folder: lambda: JsonlStore(folder / "judgments.jsonl"),
          "postgres": _postgres}


@pytest.fixture(params=sorted(STORES))
def make_store(request, tmp_path):
    return STORES[request.param](request, tmp_path)


def test_a_new_store_is_empty(make_store):
    assert make_store().read() == ()


def test_judgments_read_back_equal_and_in_order(make_store):
    store: JudgmentStore = make_store()
    first = [judgment("d1", 2, note="clear answer", trace_id="ab" * 16), judgment("d2", 0, kind=Kind.IMPORTED)]
    store.append(first)
    store.append([judgment("d1", None, time=T0 + timedelta(minutes=1))])
    assert make_store().read() == (*first, judgment("d1", None, time=T0 + timedelta(minutes=1)))


def test_appending_nothing_writes_nothing(make_store):
    store = make_store()
    store.append([])
    assert store.read() == ()


def test_read_after_gives_what_was_appended_since_the_cursor(make_store):
    store = make_store()
    first = store.read_after(None)
    assert first.judgments == () and first.restarted
    store.append([judgment("d1"), judgment("d2")])
    second = store.read_after(first.cursor)
    assert [j.doc_id for j in second.judgments] == ["d1", "d2"]
    other = make_store()  # another process's handle on the same store appends
    other.append([judgment("d3")])
    third = store.read_after(second.cursor)
    assert [j.doc_id for j in third.judgments] == ["d3"] and not third.restarted
    assert store.read_after(third.cursor).judgments == ()
    assert [j.doc_id for j in store.read_after(None).judgments] == ["d1", "d2", "d3"]


def _append_many(factory, judge: str, count: int, halfway) -> None:
    store = factory()
    halfway.wait(60)  # both start together
    for i in range(count):
        if i == count // 2:
            halfway.wait(60)  # neither writes its second half before both wrote their first: they interleave
        store.append([judgment(f"d{i}", i % 3, judge)])


def test_two_processes_appending_500_each_lose_none(make_store):
    halfway = FORK.Barrier(2)
    workers = [FORK.Process(target=_append_many, args=(make_store, judge, 500, halfway)) for judge in ("ana", "bo")]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
        assert w.exitcode == 0
    stored = make_store().read()
    assert len(stored) == 1000
    for judge in ("ana", "bo"):  # each process's judgments, all there, in the order it appended them
        assert [j.doc_id for j in stored if j.judge == judge] == [f"d{i}" for i in range(500)]
    judges = [j.judge for j in stored]
    assert judges != sorted(judges), "the two writers never interleaved: not a concurrency test"


# -- records --------------------------------------------------------------------------


def test_a_record_is_one_json_line_with_a_utc_time():
    line = judgment("d1", 2, note="n").to_json()
    assert line == {"format": 1, "query_id": "q1", "doc_id": "d1", "grade": 2, "judge": "ana", "kind": "human",
                    "time": "2025-03-01T09:30:00.000000Z", "note": "n", "trace_id": None}
    assert record_from_json(line, "j.jsonl", 1) == judgment("d1", 2, note="n")


def test_a_time_off_utc_is_stored_in_utc():
    paris = T0.astimezone(timezone(timedelta(hours=1)))
    assert judgment("d1", time=paris).to_json()["time"] == "2025-03-01T09:30:00.000000Z"


@pytest.mark.parametrize("change, message", [
    ({"grade": "2"}, "grade: expected an integer or null"),
    ({"kind": "guess"}, "kind: expected one of human, implicit, imported, got 'guess'"),
    ({"time": "2025-03-01T10:30:00+01:00"}, "time: expected a UTC ISO 8601 time"),
    ({"judge": ""}, "judge must be a non-empty printable string"),
    ({"format": 2}, "format: expected judgments format 1, got 2"),
])
def test_a_bad_record_names_its_file_line_and_field(change, message):
    with pytest.raises(DataError, match=f"^j.jsonl:7: .*{message}"):
        record_from_json({**judgment("d1").to_json(), **change}, "j.jsonl", 7)


def test_a_judgment_needs_an_aware_time():
    with pytest.raises(ValidationError, match="timezone-aware"):
        judgment("d1", time=datetime(2025, 1, 1))


# -- judgments.jsonl: torn, damaged, never rewritten ---------------------------------


def _lines(n: int) -> bytes:
    return b"".join(json.dumps(judgment(f"d{i}").to_json()).encode() + b"\n" for i in range(n))


def test_a_torn_last_line_is_not_read_and_is_cut_by_the_next_append(tmp_path):
    path = tmp_path / "judgments.jsonl"
    path.write_bytes(_lines(2) + b'{"format":1,"query_id":"q1","doc_')
    store = JsonlStore(path)
    assert [j.doc_id for j in store.read()] == ["d0", "d1"]
    store.append([judgment("d9")])
    assert path.read_bytes() == _lines(2) + json.dumps(judgment("d9").to_json(), separators=(",", ":")).encode() + b"\n"


def test_read_after_stops_before_a_torn_line_and_reads_it_once_completed(tmp_path):
    path = tmp_path / "judgments.jsonl"
    line = json.dumps(judgment("d2").to_json()).encode() + b"\n"
    path.write_bytes(_lines(1) + line[:20])
    store = JsonlStore(path)
    first = store.read_after(None)
    assert [j.doc_id for j in first.judgments] == ["d0"]
    with path.open("ab") as fh:  # the rest of the line arrives
        fh.write(line[20:])
    assert [j.doc_id for j in store.read_after(first.cursor).judgments] == ["d2"]


@pytest.mark.parametrize("change", ["replaced", "truncated", "rewritten"])
def test_read_after_reads_a_replaced_or_cut_file_whole(tmp_path, change):
    path = tmp_path / "judgments.jsonl"
    path.write_bytes(_lines(3))
    store = JsonlStore(path)
    cursor = store.read_after(None).cursor
    fresh = b"".join(json.dumps(judgment(f"e{i}").to_json()).encode() + b"\n" for i in range(4))
    if change == "replaced":  # another file renamed over it (a restore from a backup)
        (tmp_path / "new").write_bytes(fresh)
        (tmp_path / "new").rename(path)
    elif change == "truncated":
        with path.open("r+b") as fh:
            fh.truncate(len(_lines(1)))
    else:  # cut and written again past the old end, same inode, same size or more
        with path.open("r+b") as fh:
            fh.truncate(0)
            fh.write(fresh)
    again = store.read_after(cursor)
    assert again.restarted
    assert again.judgments == store.read()
    assert [j.doc_id for j in again.judgments] == (["d0"] if change == "truncated" else [f"e{i}" for i in range(4)])


def test_read_after_names_the_right_line_of_a_damaged_append(tmp_path):
    path = tmp_path / "judgments.jsonl"
    path.write_bytes(_lines(3))
    store = JsonlStore(path)
    cursor = store.read_after(None).cursor
    with path.open("ab") as fh:
        fh.write(b"\n{not json\n")
    with pytest.raises(DataError, match=f"^{path}:5: damaged line: not JSON"):
        store.read_after(cursor)


def test_a_torn_first_line_is_cut_whole(tmp_path):
    path = tmp_path / "judgments.jsonl"
    path.write_bytes(b"\x00" * 70_000)  # a block of zeros, no newline (a crash on some file systems)
    JsonlStore(path).append([judgment("d1")])
    assert JsonlStore(path).read() == (judgment("d1"),)


@pytest.mark.parametrize("damage, what", [(b"{not json\n", "damaged line: not JSON"),
                                          (b'{"format":1}\n', "grade: missing"),
                                          (b"\xff\xfe\n", "damaged line: not UTF-8")])
def test_a_damaged_line_is_an_error_naming_file_and_line_and_is_never_rewritten(tmp_path, capsys, damage, what):
    path = tmp_path / "judgments.jsonl"
    lines = _lines(3).splitlines(keepends=True)
    before = lines[0] + damage + lines[2]
    path.write_bytes(before)
    with pytest.raises(DataError) as info:
        JsonlStore(path).read()
    assert info.value.message.startswith(f"{path}:2: ") and what in info.value.message
    JsonlStore(path).append([judgment("d9")])  # an append never reads or rewrites what is there
    assert path.read_bytes().startswith(before)
    assert main(["judge", "status", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}:2: ") and len(err.splitlines()) == 1


def _child(code: str, *args: str, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args], env=env, **kw)


def test_a_process_killed_inside_a_write_loses_only_that_judgment(tmp_path):
    """The child writes half of its second line, then is killed (SIGKILL) while it holds the lock."""
    path = tmp_path / "judgments.jsonl"
    child = _child("""
        import os, signal, sys
        from searchtrace.evals.labels.judgments import JsonlStore, Judgment
        store = JsonlStore(sys.argv[1])
        store.append([Judgment("q1", "d1", 1, "ana")])
        real_write = os.write
        def torn(fd, data):
            real_write(fd, bytes(data[: len(data) // 2]))
            os.kill(os.getpid(), signal.SIGKILL)
        os.write = torn
        store.append([Judgment("q1", "d2", 2, "ana")])
        """, str(path))
    assert child.wait(30) == -signal.SIGKILL
    assert not path.read_bytes().endswith(b"\n")  # the half line is there
    store = JsonlStore(path)
    assert [j.doc_id for j in store.read()] == ["d1"]
    store.append([judgment("d3")])  # the killed process's lock went with it
    assert [j.doc_id for j in store.read()] == ["d1", "d3"]
    assert path.read_bytes().count(b"\n") == 2


def test_a_process_killed_at_a_random_moment_loses_at_most_the_judgment_in_flight(tmp_path):
    path = tmp_path / "judgments.jsonl"
    child = _child("""
        import sys
        from searchtrace.evals.labels.judgments import JsonlStore, Judgment
        store = JsonlStore(sys.argv[1])
        for i in range(100000):
            store.append([Judgment("q1", f"d{i}", i % 3, "ana", note="x" * (i % 500))])
            print(i, flush=True)
        """, str(path), stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    acked = [child.stdout.readline() for _ in range(40)]
    child.send_signal(signal.SIGKILL)
    acked += child.stdout.readlines()
    assert child.wait(30) == -signal.SIGKILL
    stored = [j.doc_id for j in JsonlStore(path).read()]
    assert len(acked) <= len(stored) <= len(acked) + 1
    assert stored == [f"d{i}" for i in range(len(stored))]
