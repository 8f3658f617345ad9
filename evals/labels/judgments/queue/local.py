"""The judge queue beside the judgments: ``judge_queue.sqlite``.

A judge holds at most one pair, until they judge it, ask for another, or its
time runs out (a judge who walked away blocks nobody for long). SQLite,
because taking a pair is a read-then-write that must be one step for every
process at once: ``BEGIN IMMEDIATE`` gives one process the write lock, and it
reads the holds, the judgments and writes its hold before the next may. The
file only holds the present: deleting it loses no judgment, only the holds.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path

from searchtrace.evals.labels.judgments.queue.protocol import OpenPairs, first_open
from searchtrace.evals.labels.judgments.records import Judgment, Pair
from searchtrace.evals.labels.judgments.store.protocol import JudgmentStore

__all__ = ["LocalJudgeQueue"]

_SCHEMA = """CREATE TABLE IF NOT EXISTS holds (
    query_id TEXT NOT NULL, doc_id TEXT NOT NULL, judge TEXT NOT NULL UNIQUE, expires REAL NOT NULL,
    PRIMARY KEY (query_id, doc_id))"""
_WAIT_S = 30.0


class LocalJudgeQueue:
    """The queue file at ``path`` (opened per call, so a handle never crosses a fork), recording into ``store``."""

    def __init__(self, path: Path, store: JudgmentStore, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._store = store
        self.clock = clock

    @property
    def store(self) -> JudgmentStore:
        return self._store

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, expired holds already dropped."""
        with closing(sqlite3.connect(self.path, timeout=_WAIT_S, isolation_level=None)) as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(_SCHEMA)
                db.execute("DELETE FROM holds WHERE expires <= ?", (self.clock(),))
                yield db
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def take(self, judge: str, candidates: Sequence[Pair], is_open: OpenPairs, ttl: float) -> Pair | None:
        """Hold for ``judge`` until ``ttl`` seconds from now the pair :func:`first_open` picks; drop their other hold.

        ``is_open`` is called inside the transaction: what it reads (the
        judgments) cannot change between its answer and the hold.
        """
        with self._transaction() as db:
            held = {(q, d): j for q, d, j in db.execute("SELECT query_id, doc_id, judge FROM holds")}
            choice = first_open(judge, candidates, held, is_open())
            db.execute("DELETE FROM holds WHERE judge = ?", (judge,))
            if choice is not None:
                db.execute("INSERT INTO holds VALUES (?, ?, ?, ?)", (*choice, judge, self.clock() + ttl))
            return choice

    def release(self, judge: str, pair: Pair | None = None) -> None:
        """Drop ``judge``'s hold (only if it is on ``pair``, when given)."""
        with self._transaction() as db:
            if pair is None:
                db.execute("DELETE FROM holds WHERE judge = ?", (judge,))
            else:
                db.execute("DELETE FROM holds WHERE judge = ? AND query_id = ? AND doc_id = ?", (judge, *pair))

    def record(self, judgment: Judgment) -> None:
        """Append ``judgment`` to the store, then drop the hold (a crash between leaves a hold that expires)."""
        self._store.append([judgment])
        self.release(judgment.judge, judgment.pair)

    def held(self) -> dict[Pair, str]:
        """Every pair held now, and by whom."""
        with self._transaction() as db:
            return {(q, d): j for q, d, j in db.execute("SELECT query_id, doc_id, judge FROM holds")}
