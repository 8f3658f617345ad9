"""The run index on the shared store (PostgreSQL, schema version 2: ``searchtrace.evals.runs.store.schema``).

The newest run with a tag is the first row of ``st_run_tags``' index range for
it; the newest of a name, of ``st_runs_name``'s. A run read whole comes back with
every file's bytes, ``run.trec`` and ``rankings.parquet`` rebuilt from the
rankings when the store keeps only those, each file checked against its sha256
and size, and every row's values checked before they are used (``rows``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchtrace.errors import NotFoundError
from searchtrace.evals.runs.runfolder import RunFolder
from searchtrace.evals.runs.store.entry import RunEntry, RunSelector
from searchtrace.evals.runs.store.postgres_publish import insert_run
from searchtrace.evals.runs.store.rebuild import rebuilt_files
from searchtrace.evals.runs.store.rows import (
    entry_from_row,
    files_from_rows,
    head_from_row,
    listed_files,
    metrics_from_rows,
    rankings_from_rows,
    summary_from_files,
)
from searchtrace.evals.runs.store.snapshot import RunFile, RunSnapshot

if TYPE_CHECKING:
    from searchtrace.database import Database

__all__ = ["PostgresRunIndex"]

_ENTRY = "SELECT r.run_id, r.name, r.summary -> 'tags', r.created_at, r.dataset, r.mode FROM st_runs r"


class PostgresRunIndex:
    """The runs published to the store ``db`` (its schema version checked by whoever opened it)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @property
    def where(self) -> str:
        return f"store {self.db.url.masked()}"

    def entries(self, tag: str | None = None) -> list[RunEntry]:
        with self.db.connection() as conn:
            if tag is None:
                rows = conn.execute(f"{_ENTRY} ORDER BY r.created_at DESC, r.run_id DESC").fetchall()
            else:
                rows = conn.execute(f"{_ENTRY} JOIN st_run_tags t USING (run_id) WHERE t.tag = %s "
                                    "ORDER BY t.created_at DESC, t.run_id DESC", (tag,)).fetchall()
        return [entry_from_row(row, self.where) for row in rows]

    def find(self, selector: RunSelector) -> RunEntry:
        with self.db.connection() as conn:
            if selector.tag is not None:
                row = conn.execute(f"{_ENTRY} WHERE r.run_id = (SELECT run_id FROM st_run_tags WHERE tag = %s "
                                   "ORDER BY created_at DESC, run_id DESC LIMIT 1)", (selector.tag,)).fetchone()
            else:
                row = conn.execute(f"{_ENTRY} WHERE r.run_id = %s", (selector.key,)).fetchone() or conn.execute(
                    f"{_ENTRY} WHERE r.name = %s ORDER BY r.created_at DESC, r.run_id DESC LIMIT 1",
                    (selector.key,)).fetchone()
        if row is None:
            raise NotFoundError(f"no {selector.describe()} in {self.where}", field="run")
        return entry_from_row(row, self.where)

    def files(self, run_id: str) -> tuple[RunFile, ...] | None:
        with self.db.connection() as conn:
            rows = conn.execute("SELECT name, sha256, size FROM st_run_files WHERE run_id = %s ORDER BY name",
                                (run_id,)).fetchall()
        return listed_files(run_id, rows, self.where)

    def local_folder(self, run_id: str) -> RunFolder | None:
        return None

    def snapshot(self, run_id: str) -> RunSnapshot:
        with self.db.connection() as conn, conn.transaction():  # one consistent read of the run
            head = conn.execute("SELECT created_at, trec_tag, doc_ids FROM st_runs WHERE run_id = %s",
                                (run_id,)).fetchone()
            if head is None:
                raise NotFoundError(f"no run {run_id!r} in {self.where}", field="run")
            cur = conn.cursor(binary=True)  # float8 in binary: bit for bit
            ranked = cur.execute("SELECT query_id, doc_ids, scores FROM st_run_rankings WHERE run_id = %s "
                                 "ORDER BY position", (run_id,)).fetchall()
            scored = cur.execute("SELECT metric, query_id, value FROM st_run_metrics WHERE run_id = %s "
                                 "ORDER BY metric, query_id", (run_id,)).fetchall()
            stored = conn.execute("SELECT name, sha256, size, content FROM st_run_files WHERE run_id = %s "
                                  "ORDER BY name", (run_id,)).fetchall()
        created_at, tag, doc_ids = head_from_row(run_id, head, self.where)
        rankings = rankings_from_rows(run_id, ranked, doc_ids, self.where)
        files = files_from_rows(run_id, stored, rebuilt_files(rankings, tag), self.where)
        summary = summary_from_files(run_id, files, self.where)
        return RunSnapshot(summary, created_at, tag, rankings, metrics_from_rows(run_id, scored, self.where), files)

    def publish(self, snapshot: RunSnapshot) -> bool:
        with self.db.connection() as conn:
            return insert_run(conn, snapshot, self.where)
