"""Judgments in the store a team shares (PostgreSQL): scoped per dataset, all or nothing, and the judge queue.

The contract every judgments store keeps runs in ``tests/test_judgments_store.py``;
this file holds what only the shared store does.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from searchtrace.database import Database, StoreUrl, database
from searchtrace.errors import BackendUnavailable
from searchtrace.evals.judgments import Judgment, PostgresJudgmentStore

T0 = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)
DOWN = "postgresql://judge:pw@127.0.0.1:9/none?connect_timeout=1"  # nothing listens on port 9


def judgment(doc: str, grade: int | None = 1, judge: str = "ana") -> Judgment:
    return Judgment("q1", doc, grade, judge, time=T0)


@pytest.fixture
def db(pg_db) -> Database:
    return database(pg_db.url)


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
