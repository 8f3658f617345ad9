"""Judgments in the store a team shares (PostgreSQL): scoped per dataset, all or nothing, and the judge queue.

The contract every judgments store keeps runs in ``tests/evals/test_judgments_store.py``;
this file holds what only the shared store does.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from searchtrace.cli import main
from searchtrace.database import Database, StoreUrl, database
from searchtrace.errors import BackendUnavailable
from searchtrace.evals.labels.judgments import (
    JudgingFolder,
    JudgingSession,
    Judgment,
    PostgresJudgeQueue,
    PostgresJudgmentStore,
)

T0 = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)
DOWN = "postgresql://judge:pw@127.0.0.1:9/none?connect_timeout=1"  # nothing listens on port 9


def judgment(doc: str, grade: int | None = 1, judge: str = "ana") -> Judgment:
    return Judgment("q1", doc, grade, judge, time=T0)


@pytest.fixture
def db(pg_db) -> Database:
    return database(pg_db.url)


@pytest.fixture
def down():
    """The URL of a store that is down; the pool a test opened on it is closed after (it would retry for minutes)."""
    yield DOWN
    from searchtrace.database.pool import _open

    if DOWN in _open:
        _open.pop(DOWN).close()


def test_each_dataset_reads_only_its_own_judgments(db):
    mine, theirs = PostgresJudgmentStore(db, "mine"), PostgresJudgmentStore(db, "theirs")
    mine.append([judgment("d1")])
    theirs.append([judgment("d2"), judgment("d3")])
    mine.append([judgment("d4")])
    assert [j.doc_id for j in mine.read()] == ["d1", "d4"]
    assert [j.doc_id for j in theirs.read()] == ["d2", "d3"]
    assert "mine" in mine.location and "pw" not in mine.location


def test_a_cursor_whose_row_is_gone_reads_the_dataset_again_whole(db):
    store = PostgresJudgmentStore(db, "mine")
    store.append([judgment("d1"), judgment("d2")])
    cursor = store.read_after(None).cursor
    with db.connection() as conn:  # a restore from an older backup
        conn.execute("DELETE FROM st_judgments WHERE doc_id = 'd2'")
    store.append([judgment("d3")])
    again = store.read_after(cursor)
    assert again.restarted and [j.doc_id for j in again.judgments] == ["d1", "d3"]
    assert not PostgresJudgmentStore(db, "theirs").read_after(again.cursor).judgments


def test_an_append_to_a_store_that_is_down_is_one_clear_error():
    store = PostgresJudgmentStore(Database(StoreUrl(DOWN), timeout=2.0), "mine")
    try:
        with pytest.raises(BackendUnavailable, match=r"^store postgresql://judge:\*\*\*\*@127.0.0.1:9/.*unreachable"):
            store.append([judgment("d1")])
    finally:
        store.db.close()


def test_an_append_cut_off_before_its_commit_stores_none_of_it(db, pg_url):
    """The server drops the connection between the batch's rows: an error, and not one row of the batch."""
    store = PostgresJudgmentStore(db, "mine")
    store.append([judgment("d0")])
    real = PostgresJudgmentStore.append_in
    admin = Database(StoreUrl(pg_url))

    def cut_off(self, conn, judgments):
        real(self, conn, judgments[:1])
        with admin.connection() as other:  # the server goes away mid-transaction
            other.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))
        real(self, conn, judgments[1:])

    PostgresJudgmentStore.append_in = cut_off  # type: ignore[method-assign]
    try:
        with pytest.raises(BackendUnavailable, match="unreachable"):
            store.append([judgment("d1"), judgment("d2")])
    finally:
        PostgresJudgmentStore.append_in = real  # type: ignore[method-assign]
        admin.close()
    assert [j.doc_id for j in store.read()] == ["d0"]


# -- the judge queue --------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"
FORK = multiprocessing.get_context("fork")
Q1, Q2 = "test-001", "test-002"
D1, D2, D3 = "bio-orsolya-venn", "gld-lampwrights-guild", "bio-meribel-osk"


@pytest.fixture
def dataset(tmp_path) -> Path:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root)
    return root


def test_holds_keep_the_files_rules_one_pair_per_judge_until_judged_or_expired(dataset, pg_db, pg_url):
    session = JudgingSession.open(dataset, store=pg_url)
    pool = [(Q1, D1), (Q1, D2), (Q2, D3)]
    assert session.next_pair("ana", pool, ttl=60) == (Q1, D1)
    assert session.next_pair("ana", pool, ttl=60) == (Q1, D1)  # asking again gives back the pair held
    assert session.next_pair("bo", pool, ttl=1.5) == (Q1, D2)
    assert session.next_pair("ana", [(Q2, D3)], ttl=60) == (Q2, D3)  # another pair: the old one is let go
    assert session.queue.held() == {(Q1, D2): "bo", (Q2, D3): "ana"}
    assert session.next_pair("cy", [(Q1, D2), (Q2, D3)], ttl=60) is None  # both held
    time.sleep(1.6)  # bo walked away: his hold ran out
    assert session.next_pair("cy", [(Q1, D2), (Q2, D3)], ttl=60) == (Q1, D2)
    session.record(Q2, D3, 1, "ana")
    assert session.queue.held() == {(Q1, D2): "cy"}  # judging it let it go
    assert session.next_pair("bo", [(Q2, D3)]) is None  # judged
    assert session.next_pair("bo", [(Q2, D3)], judges_per_pair=2) == (Q2, D3)
    other = JudgingSession.open(dataset, store=pg_url)  # another machine: the same holds and judgments
    assert other.queue.held() == {(Q1, D2): "cy", (Q2, D3): "bo"}
    assert [j.pair for j in other.store.read()] == [(Q2, D3)]
    assert not (dataset / "judgments.jsonl").exists() and not (dataset / "judge_queue.sqlite").exists()


def _judge(dataset: Path, url: str, judge: str, pool: list[tuple[str, str]], count: int, start, out: Path) -> None:
    """Judge ``count`` pairs of ``pool``, writing each hand-out's pair and window (monotonic ns) to ``out``."""
    session = JudgingSession.open(dataset, store=url)
    start.wait()
    windows = []
    for _ in range(count):
        pair = session.next_pair(judge, pool, ttl=120)
        assert pair is not None
        taken = time.monotonic_ns()  # after the hold committed (CLOCK_MONOTONIC: one clock for every process)
        time.sleep(0.002)  # a judge reads the document: the other process takes meanwhile
        windows.append((*pair, taken, time.monotonic_ns()))  # before the judgment (and release) commits
        session.record(*pair, len(pair[1]) % 3, judge)
    out.write_text(json.dumps(windows))


def test_two_judge_processes_500_judgments_each_none_lost_no_pair_held_twice(dataset, tmp_path, pg_db, pg_url):
    docs = [json.loads(line)["_id"] for line in (dataset / "corpus.jsonl").read_text().splitlines()][:200]
    pool = [(f"q{i}", d) for i in range(6) for d in docs]  # 1,200 pairs for 1,000 judgments
    start = FORK.Event()
    outs = {judge: tmp_path / f"{judge}.json" for judge in ("ana", "bo")}
    workers = [FORK.Process(target=_judge, args=(dataset, pg_url, judge, pool, 500, start, out))
               for judge, out in outs.items()]
    for w in workers:
        w.start()
    start.set()
    deadline = time.monotonic() + 180
    try:
        for w in workers:
            w.join(max(0.0, deadline - time.monotonic()))
            assert w.exitcode == 0, f"a judge process did not finish in 180 s (exit code {w.exitcode})"
    finally:
        for w in workers:
            if w.is_alive():
                w.kill()
    stored = PostgresJudgmentStore(database(pg_db.url), "sample").read()
    assert len(stored) == 1000
    windows = {judge: [tuple(w) for w in json.loads(out.read_text())] for judge, out in outs.items()}
    for judge in outs:  # each judge's 500, all there, in the order judged
        assert [j.pair for j in stored if j.judge == judge] == [(q, d) for q, d, _, _ in windows[judge]]
    assert len({j.pair for j in stored}) == 1000  # no pair judged twice
    spans: dict[tuple[str, str], list[tuple[int, int, str]]] = {}
    for judge, rows in windows.items():
        for q, d, taken, done in rows:
            spans.setdefault((q, d), []).append((taken, done, judge))
    for pair, held in spans.items():  # a pair handed out twice: never while the other still held it
        held.sort()
        assert all(a[1] <= b[0] for a, b in zip(held, held[1:])), (pair, held)
    first = [j.judge for j in stored[:200]]
    assert 0 < first.count("ana") < 200, "the two judges never took pairs at once: not a concurrency test"


def test_a_judge_killed_between_taking_and_judging_loses_nothing_and_its_hold_runs_out(dataset, pg_db, pg_url):
    pool = [(Q1, D1), (Q1, D2), (Q2, D3)]
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sys, time
        from searchtrace.evals.labels.judgments import JudgingSession
        session = JudgingSession.open(sys.argv[1], store=sys.argv[2])
        session.record("test-002", "bio-meribel-osk", 2, "ana")
        pair = session.next_pair("ana", [("test-001", "bio-orsolya-venn")], ttl=2)
        print(*pair, flush=True)
        time.sleep(600)  # reading the document when it is killed
        """), str(dataset), pg_url], env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().split() == [Q1, D1]
    finally:
        child.kill()
    assert child.wait(30) == -signal.SIGKILL
    session = JudgingSession.open(dataset, store=pg_url)
    assert [(j.pair, j.grade) for j in session.store.read()] == [((Q2, D3), 2)]
    assert session.queue.held() == {(Q1, D1): "ana"}
    assert session.next_pair("bo", pool, ttl=60) == (Q1, D2)  # ana's pair is still hers
    time.sleep(2.1)
    assert session.queue.held() == {(Q1, D2): "bo"}
    assert session.next_pair("cy", pool, ttl=60) == (Q1, D1)  # her hold ran out


def test_a_judgment_cut_off_before_its_commit_is_neither_stored_nor_frees_the_pair(dataset, pg_db, pg_url):
    session = JudgingSession.open(dataset, store=pg_url)
    assert session.next_pair("ana", [(Q1, D1)], ttl=60) == (Q1, D1)
    admin = Database(StoreUrl(pg_url))
    real = PostgresJudgeQueue._release_in

    def cut_off(self, conn, judge, pair):  # the judgment is written; the server goes away before the hold is freed
        with admin.connection() as other:
            other.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))
        real(self, conn, judge, pair)

    PostgresJudgeQueue._release_in = cut_off  # type: ignore[method-assign]
    try:
        with pytest.raises(BackendUnavailable, match="unreachable") as info:
            session.record(Q1, D1, 2, "ana")
        assert len(str(info.value).splitlines()) == 1
    finally:
        PostgresJudgeQueue._release_in = real  # type: ignore[method-assign]
        admin.close()
    assert session.store.read() == ()
    assert session.queue.held() == {(Q1, D1): "ana"}
    session.record(Q1, D1, 2, "ana")  # the judge clicks again once the store is back
    assert [j.pair for j in session.store.read()] == [(Q1, D1)] and session.queue.held() == {}


def test_a_session_on_a_store_that_is_down_is_one_clear_error(dataset, down):
    with pytest.raises(BackendUnavailable, match=r"^store postgresql://judge:\*\*\*\*@127.0.0.1:9/none.*unreachable"):
        JudgingSession.open(dataset, store=down)


# -- the judge commands with --store ------------------------------------------------------


def test_judge_commands_with_a_store_read_and_write_it_not_the_folder(dataset, pg_db, pg_url, tmp_path, capsys,
                                                                      monkeypatch):
    password = pg_url.split(":")[2].split("@")[0]
    qrels = tmp_path / "labels.tsv"
    qrels.write_text(f"query-id\tcorpus-id\tscore\n{Q1}\t{D1}\t2\n{Q1}\t{D2}\t0\n{Q2}\t{D3}\t1\n")
    assert main(["judge", "import", str(dataset), str(qrels), "--judge", "old", "--store", pg_url]) == 0
    out = capsys.readouterr().out
    assert "imported 3 judgments by 'old'" in out and "appended to dataset 'sample' in postgresql://" in out and password not in out
    assert not (dataset / "judgments.jsonl").exists()
    assert [(j.pair, j.grade) for j in PostgresJudgmentStore(database(pg_db.url), "sample").read()] == [
        ((Q1, D1), 2), ((Q1, D2), 0), ((Q2, D3), 1)]
    monkeypatch.setenv("SEARCHTRACE_STORE", pg_url)  # the environment names the store as --store does
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["judge", "status", str(dataset), "--json"]) == 0
    totals = json.loads(capsys.readouterr().out)["totals"]
    assert (totals["pairs"], totals["relevant"], totals["by_kind"]["imported"]) == (3, 2, 3)
    assert main(["judge", "status", str(dataset)]) == 0
    out = capsys.readouterr().out
    assert all(len(line) <= 80 for line in out.splitlines()[:-1]) and password not in out  # but the store, whole
    assert out.splitlines()[-1] == f"judgments in dataset 'sample' in {StoreUrl(pg_url).masked()}"
    assert main(["judge", "export", str(dataset), "--split", "shared", "--kind", "imported"]) == 0
    assert (dataset / "qrels" / "shared.tsv").read_text().splitlines()[1:] == [
        f"{Q1}\t{D1}\t2", f"{Q1}\t{D2}\t0", f"{Q2}\t{D3}\t1"]
    monkeypatch.delenv("SEARCHTRACE_STORE")
    capsys.readouterr()
    assert main(["judge", "status", str(dataset), "--json"]) == 0  # without a store: the folder's (empty) file
    assert json.loads(capsys.readouterr().out)["totals"]["pairs"] == 0


def test_a_judge_command_on_a_store_not_migrated_or_down_is_one_line(dataset, pg_url, down, capsys):
    assert main(["judge", "status", str(dataset), "--store", pg_url]) == 2
    err = capsys.readouterr().err
    assert "has no searchtrace schema" in err and "searchtrace store migrate" in err and len(err.splitlines()) == 1
    assert main(["judge", "status", str(dataset), "--store", down]) == 1
    err = capsys.readouterr().err
    assert "store postgresql://judge:****@127.0.0.1:9/none" in err and "unreachable" in err
    assert len(err.splitlines()) == 1 and ":pw@" not in err


def test_judge_implicit_with_a_store_writes_there_and_a_rerun_writes_nothing(dataset, pg_db, pg_url, tmp_path,
                                                                              capsys):
    from test_implicit_judgments import _traffic

    from searchtrace.traces.store.postgres import PostgresTraceStore

    home = tmp_path / "home"
    _traffic(home, rounds=3, also=PostgresTraceStore(pg_db))  # with --store, traces are read from the store too
    args = ["judge", "implicit", str(dataset), "--home", str(home), "--no-progress", "--store", pg_url, "--json"]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    stored = PostgresJudgmentStore(database(pg_db.url), "sample").read()
    assert report["judgments"]["written"] == len(stored) == len(report["pairs"]) > 0
    assert {j.kind.value for j in stored} == {"implicit"} and not (dataset / "judgments.jsonl").exists()
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["judgments"]["written"] == 0  # the store's judgments were read back


def test_a_take_needs_one_connection(dataset, pg_db, pg_url):
    """The judgments a take reads go through its own transaction: a pool of one connection is enough."""
    db = Database(StoreUrl(pg_url), max_size=1, timeout=3.0)
    try:
        store = PostgresJudgmentStore(db, "sample")
        session = JudgingSession(PostgresJudgeQueue(store), JudgingFolder.at(dataset).scale())
        session.record(Q1, D1, 1, "bo")
        assert session.next_pair("ana", [(Q1, D1), (Q1, D2)]) == (Q1, D2)
        session.record(Q1, D2, 0, "ana")
        assert session.next_pair("ana", [(Q1, D1), (Q1, D2)]) is None
        assert session.queue.held() == {}
    finally:
        db.close()
