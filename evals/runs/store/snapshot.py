"""A whole completed run in memory (:class:`RunSnapshot`): what is published, pushed and exported.

:func:`read_snapshot` reads a run folder and refuses one that is incomplete or
damaged with one error naming the file: a required file missing, a summary or
settings that do not parse, an unreadable journal line, table or ranking.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from searchtrace.errors import DataError, NotFoundError
from searchtrace.evals.runs.runfolder import RunFolder, RunSummary
from searchtrace.evals.runs.store.entry import RunEntry

if TYPE_CHECKING:
    import numpy as np

    from searchtrace.evals.scoring.rankings import Run

__all__ = ["REQUIRED", "RunFile", "RunSnapshot", "content_hash", "read_snapshot", "sha256"]

REQUIRED = (RunFolder.SETTINGS, RunFolder.SUMMARY, RunFolder.PER_QUERY, RunFolder.RESULTS, RunFolder.RUN_FILE)
"""The files a completed run folder has (``journal.jsonl`` and ``rankings.parquet`` only when written)."""
OPTIONAL = (RunFolder.JOURNAL, RunFolder.RANKINGS)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class RunFile:
    """One file of a run folder: its name, sha256 and size, and its bytes (None: rebuilt from the rankings)."""

    name: str
    sha256: str
    size: int
    content: bytes | None = None


@dataclass(frozen=True, eq=False)
class RunSnapshot:
    """A completed run: its summary, rankings, per-query metrics and every file of its folder.

    Attributes:
        summary: ``run.json``.
        created_at: when the run was made (``RunFolder.created_at``), UTC.
        trec_tag: the last column of its ``run.trec``.
        rankings: every query's ranking.
        metrics: each metric's judged queries and their values.
        files: every file of the folder, by name order.
    """

    summary: RunSummary
    created_at: datetime
    trec_tag: str
    rankings: Run
    metrics: Mapping[str, tuple[list[str], np.ndarray]]
    files: tuple[RunFile, ...]

    @property
    def run_id(self) -> str:
        return self.summary.run_id

    def entry(self) -> RunEntry:
        s = self.summary
        return RunEntry(s.run_id, s.name, tuple(s.tags), self.created_at, s.dataset.name, s.retriever.mode)

    def file(self, name: str) -> RunFile:
        return next(f for f in self.files if f.name == name)

    def content_hash(self) -> str:
        return content_hash(self.files)


def content_hash(files: tuple[RunFile, ...] | list[RunFile]) -> str:
    """One hash of a run's files (names and contents): equal for the same run, whoever published it."""
    return sha256("".join(f"{f.name}\0{f.sha256}\n" for f in sorted(files, key=lambda f: f.name)).encode())


def read_snapshot(folder: RunFolder) -> RunSnapshot:
    """The completed run in ``folder``, every file read and checked.

    Raises:
        NotFoundError: not a completed run folder, or a required file missing (naming it).
        DataError: a damaged file, naming it.
    """
    folder = RunFolder.completed(folder.path)
    for name in REQUIRED:
        if not (folder.path / name).is_file():
            raise NotFoundError(f"{folder.path / name}: missing (an incomplete run folder)", field="run")
    summary = folder.summary()
    folder.settings()
    folder.records()
    if folder.journal.problems:
        raise folder.journal.problems[0]
    rankings = folder.rankings()
    if (folder.path / RunFolder.RANKINGS).is_file() and folder.run_file.stat().st_size:
        from searchtrace.evals.runs.trec import read_run

        read_run(folder.run_file)  # the file exported beside the table must read too
    _readable_table(folder, "results")
    _readable_table(folder, "per_query")
    names = [str(m) for m in summary.metrics]
    metrics = _metrics(folder, names)
    files = tuple(_file(folder, name) for name in sorted((*REQUIRED, *OPTIONAL))
                  if (folder.path / name).is_file())
    return RunSnapshot(summary, folder.created_at(summary), _trec_tag(folder), rankings, metrics, files)


def _readable_table(folder: RunFolder, table: str) -> None:
    try:
        folder.columns(table)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise DataError(str(folder.path / f"{table}.parquet"), None, f"cannot read the table: {exc}") from None


def _file(folder: RunFolder, name: str) -> RunFile:
    data = (folder.path / name).read_bytes()
    return RunFile(name, sha256(data), len(data), data)


def _metrics(folder: RunFolder, names: list[str]) -> dict[str, tuple[list[str], np.ndarray]]:
    import numpy as np

    present = set(folder.columns("per_query"))
    columns = folder.per_query_columns(["query_id", *(m for m in names if m in present)])
    query_ids = columns.get("query_id", np.empty(0, dtype=object))
    out = {}
    for name in names:
        if name in columns:
            values = columns[name]
            judged = ~np.isnan(values)
            out[name] = ([str(q) for q in query_ids[judged]], values[judged])
    return out


def _trec_tag(folder: RunFolder) -> str:
    with folder.run_file.open("rb") as handle:
        first = handle.readline().split()
    if not first:
        return folder.run_id
    try:
        return first[-1].decode("utf-8")
    except UnicodeDecodeError:
        raise DataError(str(folder.run_file), 1, "the tag is not UTF-8") from None

