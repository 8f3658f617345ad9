"""The run index on the shared store (PostgreSQL, schema version 2: ``searchtrace.evals.runs.store.schema``).

The newest run with a tag is the first row of ``st_run_tags``' index range for
it; the newest of a name, of ``st_runs_name``'s. A run read whole comes back with
every file's bytes, ``run.trec`` and ``rankings.parquet`` rebuilt from the
rankings when the store keeps only those, each file checked against its sha256.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from searchtrace.errors import DataError, NotFoundError
from searchtrace.evals.runs.runfolder import RunFolder, RunSummary
from searchtrace.evals.runs.store.entry import RunEntry, RunSelector
from searchtrace.evals.runs.store.postgres_publish import insert_run
from searchtrace.evals.runs.store.rebuild import rebuilt_files
from searchtrace.evals.runs.store.snapshot import RunFile, RunSnapshot, sha256

if TYPE_CHECKING:
    from searchtrace.database import Database
    from searchtrace.evals.scoring.rankings import Run

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
        return [_entry(row) for row in rows]

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
        return _entry(row)

    def files(self, run_id: str) -> tuple[RunFile, ...] | None:
        with self.db.connection() as conn:
            rows = conn.execute("SELECT name, sha256, size FROM st_run_files WHERE run_id = %s ORDER BY name",
                                (run_id,)).fetchall()
        return tuple(RunFile(name, digest, int(size)) for name, digest, size in rows) or None

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
        rankings = _rankings(ranked, head[2])
        files = _files(run_id, stored, rebuilt_files(rankings, head[1]))
        summary_file = next(f for f in files if f.name == RunFolder.SUMMARY)
        summary = RunSummary.from_json(json.loads(summary_file.content or b"null"), f"{self.where}: {run_id}")
        return RunSnapshot(summary, head[0].astimezone(UTC), head[1], rankings, _metrics(scored), files)

    def publish(self, snapshot: RunSnapshot) -> bool:
        with self.db.connection() as conn:
            return insert_run(conn, snapshot, self.where)


def _entry(row: tuple[Any, ...]) -> RunEntry:
    run_id, name, tags, created_at, dataset, mode = row
    when: datetime = created_at.astimezone(UTC)
    return RunEntry(run_id, name, tuple(tags or ()), when, dataset, mode or "")


def _rankings(ranked: list[tuple[Any, ...]], doc_ids: list[str]) -> Run:
    """The run the rows hold, its vocabularies in the order its codes number them (as the folder's run had)."""
    from searchtrace.evals.scoring.rankings import Run

    code = {doc: i for i, doc in enumerate(doc_ids)}
    queries = np.empty(len(ranked), dtype=object)
    queries[:] = [q for q, _, _ in ranked]
    docs = np.empty(len(doc_ids), dtype=object)
    docs[:] = doc_ids
    lengths = [len(d) for _, d, _ in ranked]
    return Run.from_codes(queries, docs, np.repeat(np.arange(len(ranked), dtype=np.int32), lengths),
                          np.fromiter((code[d] for _, row, _ in ranked for d in row), dtype=np.int32, count=sum(lengths)),
                          np.fromiter((s for _, _, row in ranked for s in row), dtype=np.float64, count=sum(lengths)),
                          copy=False)


def _files(run_id: str, stored: list[tuple[Any, ...]], rebuilt: dict[str, bytes]) -> tuple[RunFile, ...]:
    out = []
    for name, digest, size, content in stored:
        data = bytes(content) if content is not None else rebuilt.get(name, b"")
        if sha256(data) != digest:
            raise DataError(f"run {run_id!r}: {name}", None, "the store's copy does not match its sha256")
        out.append(RunFile(name, digest, int(size), data))
    return tuple(out)


def _metrics(rows: list[tuple[Any, ...]]) -> dict[str, tuple[list[str], np.ndarray]]:
    grouped: dict[str, tuple[list[str], list[float]]] = {}
    for metric, query, value in rows:
        ids, values = grouped.setdefault(metric, ([], []))
        ids.append(query)
        values.append(value)
    return {m: (ids, np.array(values, dtype=np.float64)) for m, (ids, values) in grouped.items()}
