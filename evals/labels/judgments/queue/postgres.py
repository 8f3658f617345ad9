"""The judge queue in the store a team shares: pairs handed out with ``SELECT ... FOR UPDATE SKIP LOCKED``.

``st_judge_queue`` holds a row per pair offered to a dataset's judges, with its
holder and when the hold ends (the server's clock, so machines' clocks do not
matter). Taking a pair is one transaction: the candidates are queued, the
first open one that nobody holds (or whose hold has run out) is locked with
``FOR UPDATE SKIP LOCKED`` (a row another judge is taking this instant is
skipped, never waited on), the judgments are read again on the same
connection (one recorded before the lock is seen: recording a pair locks its
row), and the hold is written in place of the judge's other one. New
candidates are inserted sorted, so two first takes never deadlock. Recording a judgment appends it and frees its
row in one transaction: a judge killed between taking and recording loses
nothing stored, and their hold runs out. Takes by one judge (two tabs) run one
at a time, and a unique index holds a judge to one row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from searchtrace.evals.labels.judgments.queue.protocol import OpenPairs
from searchtrace.evals.labels.judgments.records import Judgment, Pair
from searchtrace.evals.labels.judgments.store.postgres import PostgresJudgmentStore

if TYPE_CHECKING:
    import psycopg

__all__ = ["TAKE_LOCK", "PostgresJudgeQueue"]

TAKE_LOCK = 0x5EA2_0004
"""The class key of the advisory lock one judge's take holds (with ``hashtext`` of the dataset and judge)."""

_FIRST_FREE = """
SELECT q.query_id, q.doc_id FROM st_judge_queue q
JOIN unnest(%s::text[], %s::text[]) WITH ORDINALITY AS c(query_id, doc_id, n)
  ON q.query_id = c.query_id AND q.doc_id = c.doc_id
WHERE q.dataset = %s AND (q.holder IS NULL OR q.holder = %s OR q.expires <= clock_timestamp())
ORDER BY q.holder IS NOT DISTINCT FROM %s DESC, c.n
LIMIT 1 FOR UPDATE OF q SKIP LOCKED"""
_FREE = "UPDATE st_judge_queue SET holder = NULL, expires = NULL WHERE dataset = %s AND holder = %s"


class PostgresJudgeQueue:
    """The judge queue of ``store``'s dataset, in its database (nothing is sent until a call)."""

    def __init__(self, store: PostgresJudgmentStore) -> None:
        self.store = store
        self._queued: set[Pair] = set()  # pairs this object has put in the queue (inserting them again is a no-op)

    def take(self, judge: str, candidates: Sequence[Pair], is_open: OpenPairs, ttl: float) -> Pair | None:
        """Hold the first open candidate nobody else holds for ``judge``, ``ttl`` seconds (see the module docstring).

        Raises:
            BackendUnavailable: the store cannot be reached (nothing changed).
        """
        dataset = self.store.dataset
        new = sorted(p for p in set(candidates) if p not in self._queued)  # one order: inserts never deadlock
        with self.store.db.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (TAKE_LOCK, f"{dataset}\n{judge}"))
            if new:
                conn.execute("INSERT INTO st_judge_queue (dataset, query_id, doc_id) SELECT %s, * FROM "
                             "unnest(%s::text[], %s::text[]) ON CONFLICT DO NOTHING",
                             (dataset, [q for q, _ in new], [d for _, d in new]))
            with self.store.reading_in(conn):
                choice = self._lock_first_open(conn, judge, candidates, is_open)
            if choice is None:
                conn.execute(_FREE, (dataset, judge))
            else:
                conn.execute(_FREE + " AND (query_id, doc_id) <> (%s, %s)", (dataset, judge, *choice))
                conn.execute("UPDATE st_judge_queue SET holder = %s, expires = clock_timestamp() + "
                             "make_interval(secs => %s) WHERE dataset = %s AND query_id = %s AND doc_id = %s",
                             (judge, ttl, dataset, *choice))
        self._queued.update(new)
        return choice

    def _lock_first_open(self, conn: psycopg.Connection[Any], judge: str, candidates: Sequence[Pair],
                         is_open: OpenPairs) -> Pair | None:
        """Lock the first candidate open as of the judgments stored now and free for ``judge``; None: none left."""
        passed: set[Pair] = set()
        open_now = is_open()
        while True:
            pairs = [p for p in candidates if p not in passed and open_now(p)]
            # Never prepared: a generic plan (psycopg prepares what runs 5 times) cannot see the arrays' size and
            # took 30 times as long as the plan made for each call's.
            row = conn.execute(_FIRST_FREE, ([q for q, _ in pairs], [d for _, d in pairs], self.store.dataset,
                                             judge, judge), prepare=False).fetchone() if pairs else None
            if row is None:
                return None
            pair = (row[0], row[1])
            open_now = is_open()  # a judgment recorded before the lock is visible now
            if open_now(pair):
                return pair
            passed.add(pair)

    def release(self, judge: str, pair: Pair | None = None) -> None:
        """Drop ``judge``'s hold (only if it is on ``pair``, when given)."""
        with self.store.db.connection() as conn:
            self._release_in(conn, judge, pair)

    def _release_in(self, conn: psycopg.Connection[Any], judge: str, pair: Pair | None) -> None:
        if pair is None:
            conn.execute(_FREE, (self.store.dataset, judge))
        else:
            conn.execute(_FREE + " AND query_id = %s AND doc_id = %s", (self.store.dataset, judge, *pair))

    def record(self, judgment: Judgment) -> None:
        """Append ``judgment`` to the store and free its judge's hold on its pair, in one transaction.

        Raises:
            BackendUnavailable: the store went away before the commit (neither happened).
        """
        with self.store.db.connection() as conn, conn.transaction():
            self.store.append_in(conn, [judgment])
            self._release_in(conn, judgment.judge, judgment.pair)

    def held(self) -> dict[Pair, str]:
        """Every pair held now (by the server's clock), and by whom."""
        with self.store.db.connection() as conn:
            rows = conn.execute("SELECT query_id, doc_id, holder FROM st_judge_queue WHERE dataset = %s AND "
                                "holder IS NOT NULL AND expires > clock_timestamp()", (self.store.dataset,))
            return {(q, d): who for q, d, who in rows}
