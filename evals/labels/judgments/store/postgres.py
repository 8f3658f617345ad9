"""A dataset's judgments in the store a team shares: ``st_judgments`` on PostgreSQL.

The same contract as ``judgments.jsonl``: judgments are only appended, each
append is one transaction (all of it stored, or none), and a reader resumes
after the last ``seq`` it read. Appends to one dataset take an advisory lock
before their rows get their ``seq`` (see ``.schema``), so
rows become visible in ``seq`` order and a cursor never skips one committed
late. A cursor whose row is gone (the table restored from an older backup, or
emptied) reads the dataset again whole.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC
from typing import TYPE_CHECKING, Any

from searchtrace.evals.labels.judgments.records import Judgment, Kind
from searchtrace.evals.labels.judgments.store.protocol import Appended

if TYPE_CHECKING:
    import psycopg

    from searchtrace.database import Database, StoreUrl

__all__ = ["APPEND_LOCK", "PostgresJudgmentStore"]

APPEND_LOCK = 0x5EA2_0003
"""The class key of the advisory lock an append to a dataset takes (with the dataset's ``hashtext``)."""

_COLUMNS = "query_id, doc_id, grade, judge, kind, time, note, trace_id"
_INSERT = f"INSERT INTO st_judgments (dataset, {_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"

_checked: set[str] = set()  # stores whose schema version this process has checked
_reading_in: ContextVar[tuple[Database, psycopg.Connection[Any]] | None] = ContextVar("judgments_reading_in",
                                                                                      default=None)


@dataclass(frozen=True)
class _Cursor:
    """The store read and the last ``seq`` read from it (0: none)."""

    store: tuple[str, str]
    seq: int


class PostgresJudgmentStore:
    """The judgments of the dataset named ``dataset`` in ``db`` (nothing is sent until a read or an append)."""

    def __init__(self, db: Database, dataset: str) -> None:
        self.db = db
        self.dataset = dataset

    @classmethod
    def open(cls, url: StoreUrl, dataset: str) -> PostgresJudgmentStore:
        """The dataset's judgments in the store at ``url``, its schema checked (once per process and store).

        Raises:
            StoreVersionError: a store older or newer than this client. BackendUnavailable: it cannot be reached.
        """
        from searchtrace.database import check_version, database

        db = database(url)
        if url.conninfo not in _checked:
            check_version(db)
            _checked.add(url.conninfo)
        return cls(db, dataset)

    @property
    def location(self) -> str:
        return f"dataset {self.dataset!r} in {self.db.url.masked()}"

    def append(self, judgments: Sequence[Judgment]) -> None:
        """Append ``judgments`` in one transaction.

        Raises:
            BackendUnavailable: the store cannot be reached, or went away before the commit (nothing stored).
        """
        if not judgments:
            return
        with self.db.connection() as conn, conn.transaction():
            self.append_in(conn, judgments)

    def append_in(self, conn: psycopg.Connection[Any], judgments: Sequence[Judgment]) -> None:
        """Append ``judgments`` inside the caller's transaction on ``conn`` (visible when it commits)."""
        conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (APPEND_LOCK, self.dataset))
        with conn.cursor() as cur:
            cur.executemany(_INSERT, [(self.dataset, j.query_id, j.doc_id, j.grade, j.judge, j.kind.value, j.time,
                                       j.note, j.trace_id) for j in judgments])

    @contextmanager
    def reading_in(self, conn: psycopg.Connection[Any]) -> Iterator[None]:
        """Within the block, this thread's reads of the store go through ``conn`` (the caller's transaction): a
        queue's take reads the judgments without a second connection, which a full pool could not give."""
        token = _reading_in.set((self.db, conn))
        try:
            yield
        finally:
            _reading_in.reset(token)

    @contextmanager
    def _reader(self) -> Iterator[psycopg.Connection[Any]]:
        bound = _reading_in.get()
        if bound is not None and bound[0] is self.db:
            with bound[1].transaction():  # a savepoint in the caller's transaction
                yield bound[1]
            return
        with self.db.connection() as conn, conn.transaction():
            yield conn

    def read(self) -> tuple[Judgment, ...]:
        """Every judgment of the dataset, in the order appended."""
        return self.read_after(None).judgments

    def read_after(self, cursor: object | None) -> Appended:
        """The dataset's judgments with a ``seq`` past ``cursor``'s (all: no cursor, another store's, or its row gone)."""
        key = (self.db.url.masked(), self.dataset)
        with self._reader() as conn:
            resume = isinstance(cursor, _Cursor) and cursor.store == key and (
                cursor.seq == 0 or conn.execute("SELECT 1 FROM st_judgments WHERE seq = %s AND dataset = %s",
                                                (cursor.seq, self.dataset)).fetchone() is not None)
            after = cursor.seq if resume and isinstance(cursor, _Cursor) else 0
            rows = conn.execute(f"SELECT seq, {_COLUMNS} FROM st_judgments WHERE dataset = %s AND seq > %s "
                                "ORDER BY seq", (self.dataset, after)).fetchall()
        judgments = tuple(Judgment(q, d, g, who, Kind(kind), when.astimezone(UTC), note, trace)
                          for _, q, d, g, who, kind, when, note, trace in rows)
        last = rows[-1][0] if rows else after
        return Appended(judgments, _Cursor(key, last), restarted=not resume)
