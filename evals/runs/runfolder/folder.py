"""A run folder on disk: its files, and every read and write of them.

::

    <run folder>/
      settings.json       EvalSettings, written first
      journal.jsonl       one record per completed query (the resumable part)
      run.json            RunSummary, written last: its presence marks the run complete
      per_query.parquet   one row per query
      results.parquet     the top results of each query
      run.trec            the ranking, in TREC format
      rankings.parquet    the same rankings as columns (fast to read; runs written before it lack it)

``run.json`` records the sha256 and size of every other file of the folder
(``files``) and a hash of its own other keys (``summary_sha256``); :meth:`RunFolder.summary`,
through which every reader comes, verifies them and refuses a mismatch naming the
file. Folders written before they were recorded read as before.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from searchtrace.durable import write_atomic
from searchtrace.errors import DataError, NotFoundError
from searchtrace.evals.runs.runfolder.journal import Journal
from searchtrace.evals.runs.runfolder.outside import outside_runs
from searchtrace.evals.runs.runfolder.records import CorrectiveOutcome, JournalRecord, QueryOutcome
from searchtrace.evals.runs.runfolder.settings import EvalSettings
from searchtrace.evals.runs.runfolder.summary import FileDigest, RunSummary
from searchtrace.home import Home
from searchtrace.safepaths import inside

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from searchtrace.evals.scoring.metrics import Evaluation
    from searchtrace.evals.scoring.rankings import Run

__all__ = ["RunFolder"]

_VERIFIED: dict[tuple[str, str], tuple[int, int, int, int, str]] = {}
"""(folder, file) -> (size, mtime_ns, ctime_ns, inode, sha256) of a file whose hash matched."""
_RACY_NS = 2 * 10**9
"""A file changed this recently is hashed at every read, never remembered as verified: a file system's
timestamps are coarse (a tick of a few ms on tmpfs, 2 s on FAT), so a same-size write in the same tick, on
the same inode (reused after a delete), would keep every remembered value (git's "racily clean" rule)."""
_VERIFIED_LOCK = threading.Lock()
_CHUNK = 1 << 20
_STAMP = re.compile(r"(?:^|-)(\d{8}T\d{6})(?:-|$)")  # default run ids: <dataset>-<mode>-<UTC stamp>-<key>


class RunFolder:
    """One run folder; nothing is read until asked.

    Args:
        path: the folder (it may not exist yet: the runner creates it).
    """

    SETTINGS = "settings.json"
    JOURNAL = "journal.jsonl"
    SUMMARY = "run.json"
    PER_QUERY = "per_query.parquet"
    RESULTS = "results.parquet"
    RUN_FILE = "run.trec"
    RANKINGS = "rankings.parquet"
    FILES = (SETTINGS, JOURNAL, PER_QUERY, RESULTS, RUN_FILE, RANKINGS)
    """Every file a run folder may hold besides ``run.json``."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.journal = Journal(self.path / self.JOURNAL)

    def __repr__(self) -> str:
        return f"RunFolder({str(self.path)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunFolder) and self.path.resolve() == other.path.resolve()

    def __hash__(self) -> int:
        return hash(self.path.resolve())

    @classmethod
    def completed(cls, path: str | os.PathLike[str]) -> RunFolder:
        """The completed run at ``path`` (the folder, or its ``run.json``).

        Raises:
            NotFoundError: no completed run there.
        """
        path = Path(path)
        folder = cls(path.parent if path.name == cls.SUMMARY else path)
        if not folder.is_complete:
            raise NotFoundError(f"{folder.path}: not a completed run folder (no {cls.SUMMARY})", field="run")
        return folder

    @classmethod
    def in_home(cls, home: Home, run_id: str) -> RunFolder:
        """The completed run ``run_id`` of a home folder (in ``<home>/runs``, else among the folders it lists
        outside itself: ``eval --out``).

        Raises:
            ValidationError: ``run_id`` is not a plain folder name (it may come from a URL).
            NotFoundError: no completed run by that id.
        """
        folder = cls(home.run(run_id))
        if folder.is_complete:
            return folder
        for path in outside_runs(home).present:
            if path.name == run_id and cls(path).is_complete:
                return cls(path)
        raise NotFoundError(f"no completed run {run_id!r} in {home.runs} or {home.runs_outside}", field="run")

    @classmethod
    def all_in_home(cls, home: Home) -> list[RunFolder]:
        """Every completed run folder of a home, by name, then those it lists outside itself
        (``eval --out``) in the order they were written; of two folders with one name (a run's id),
        the first."""
        root = home.runs
        inside_home = [cls(p) for p in sorted(root.iterdir()) if (p / cls.SUMMARY).is_file()] \
            if root.is_dir() else []
        ids = {f.run_id for f in inside_home}
        outside = []
        for path in outside_runs(home).present:
            if path.name not in ids and cls(path).is_complete:
                ids.add(path.name)
                outside.append(cls(path))
        return [*inside_home, *outside]

    # -- files ---------------------------------------------------------------

    @property
    def run_id(self) -> str:
        """The run's id: the folder's name."""
        return self.path.name

    @property
    def summary_file(self) -> Path:
        return self.path / self.SUMMARY

    @property
    def settings_file(self) -> Path:
        return self.path / self.SETTINGS

    @property
    def per_query_file(self) -> Path:
        return self.path / self.PER_QUERY

    @property
    def results_file(self) -> Path:
        return self.path / self.RESULTS

    @property
    def run_file(self) -> Path:
        return self.path / self.RUN_FILE

    @property
    def is_complete(self) -> bool:
        """The run finished: its summary is written."""
        return self.summary_file.is_file()

    @property
    def is_interrupted(self) -> bool:
        """The run started (its settings are written) and did not finish."""
        return self.settings_file.is_file() and not self.is_complete

    # -- reads ---------------------------------------------------------------

    def settings(self) -> EvalSettings:
        """The run's settings (``settings.json``).

        Raises:
            NotFoundError: the folder has no settings file; DataError: a malformed one.
        """
        return EvalSettings.from_json(self._json(self.settings_file), str(self.settings_file))

    def summary(self) -> RunSummary:
        """The run's summary (``run.json``).

        Raises:
            NotFoundError: the run is not complete; DataError: a malformed or newer file.
        """
        summary = RunSummary.from_json(self._json(self.summary_file), str(self.summary_file))
        if summary.files is not None:
            self.verify(summary.files)
        return summary

    def verify(self, files: Mapping[str, FileDigest]) -> None:
        """Check every file ``run.json`` records against its sha256 and size (a file unchanged since it last
        verified in this process, by size, mtime and inode, is not hashed again).

        Raises:
            DataError: a file missing, of another size or content, naming it.
        """
        root = str(self.path.resolve())
        added = [n for n in self.FILES if n not in files and (self.path / n).is_file()]
        if added:
            raise DataError(str(self.path / added[0]), None, f"not recorded in {self.SUMMARY}: added after the run "
                                                              "was written")
        for name in sorted(files):
            want = files[name]
            path = inside(self.path, name, "file name")
            try:
                st = path.stat()
            except FileNotFoundError:
                raise DataError(str(path), None, f"missing, though {self.SUMMARY} records it: an incomplete "
                                                  "run folder") from None
            except OSError as exc:
                raise DataError(str(path), None, f"cannot read: {exc}") from None
            if st.st_size != want.size:
                raise DataError(str(path), None, f"{st.st_size} bytes where {self.SUMMARY} records {want.size}: "
                                                  "damaged or changed after the run was written")
            seen = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, want.sha256)
            with _VERIFIED_LOCK:
                if _VERIFIED.get((root, name)) == seen:
                    continue
            if _sha256(path) != want.sha256:
                raise DataError(str(path), None, f"its sha256 does not match {self.SUMMARY}'s: damaged or changed "
                                                  "after the run was written")
            if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > _RACY_NS:
                with _VERIFIED_LOCK:
                    _VERIFIED[(root, name)] = seen

    def digests(self) -> dict[str, FileDigest]:
        """The sha256 and size of every file of the folder but ``run.json`` (hidden files left out)."""
        out = {}
        for path in sorted(self.path.iterdir()):
            if path.name == self.SUMMARY or path.name.startswith(".") or not path.is_file():
                continue
            out[path.name] = FileDigest(_sha256(path), path.stat().st_size)
        return out

    def records(self) -> list[JournalRecord]:
        """Every readable journal record, in order (unreadable lines: ``journal.problems``)."""
        return self.journal.read()

    def outcomes(self, records: Sequence[JournalRecord] | None = None) -> list[QueryOutcome]:
        """The latest record of each query (corrective retries left out), in the order of the latest; of
        ``records`` when given (the journal's, read once by a caller that needs both)."""
        latest: dict[str, QueryOutcome] = {}
        for r in self.records() if records is None else records:
            if isinstance(r, QueryOutcome):
                latest.pop(r.query_id, None)
                latest[r.query_id] = r
        return list(latest.values())

    def correctives(self) -> list[CorrectiveOutcome]:
        """The journal's corrective records, in order."""
        return [r for r in self.records() if isinstance(r, CorrectiveOutcome)]

    def query(self, query_id: str) -> QueryOutcome | None:
        """The journal record of ``query_id`` (not a corrective retry), or None.

        Only lines that can hold the id are parsed: a query on the dashboard
        does not pay for decoding the whole journal.
        """
        needle = json.dumps(query_id, ensure_ascii=False).encode()
        found = None
        for number, raw in self.journal.lines():
            if needle in raw:
                try:
                    record = self.journal.parse(number, raw)
                except DataError:
                    continue
                if isinstance(record, QueryOutcome) and record.query_id == query_id:
                    found = record  # a resumed run's later record of the query wins
        return found

    def created_at(self, summary: RunSummary | None = None) -> datetime:
        """When the run was made: the UTC stamp in a default run id, else the summary's time, else ``run.json``'s mtime.

        Pass the ``summary`` when it is already read.
        """
        match = _STAMP.search(self.run_id)
        if match:
            try:
                return datetime.strptime(match.group(1), "%Y%m%dT%H%M%S").replace(tzinfo=UTC)
            except ValueError:
                pass
        try:
            created = (summary or self.summary()).created_at
        except (DataError, NotFoundError):
            created = None
        if created is not None:
            return created if created.tzinfo else created.replace(tzinfo=UTC)
        return datetime.fromtimestamp(self.summary_file.stat().st_mtime, tz=UTC)

    def per_query(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """``per_query.parquet``, only the ``columns`` it has when given.

        Raises:
            NotFoundError: the run has no per-query table.
        """
        return _parquet(self.per_query_file, columns, self.run_id)

    def per_query_columns(self, columns: Sequence[str]) -> dict[str, np.ndarray]:
        """Of ``per_query.parquet``'s ``columns``, those it has, as numpy arrays: numbers as float64 (NaN where
        missing), the rest as object arrays (None where missing). Read by pyarrow alone, through Python lists
        (pyarrow's own conversion to numpy imports pandas), so a command that needs only these never does.

        Raises:
            NotFoundError: the run has no per-query table; DataError: an unreadable one.
        """
        import numpy as np
        import pyarrow.parquet as pq
        import pyarrow.types as types

        path = self.per_query_file
        if not path.is_file():
            raise NotFoundError(f"run {self.run_id!r} has no {path.name}", field="run")
        try:
            present = set(pq.read_schema(path).names)
            table = pq.ParquetFile(path).read(columns=[c for c in columns if c in present])
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise DataError(str(path), None, f"cannot read the table: {exc}") from None
        out = {}
        for name, column in zip(table.column_names, table.columns):
            values = column.to_pylist()
            if types.is_floating(column.type) or types.is_integer(column.type):
                out[name] = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
            else:
                out[name] = np.empty(len(values), dtype=object)
                out[name][:] = values
        return out

    def results(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """``results.parquet``, only the ``columns`` it has when given.

        Raises:
            NotFoundError: the run has no results table.
        """
        return _parquet(self.results_file, columns, self.run_id)

    def columns(self, table: str) -> list[str]:
        """The column names of ``per_query`` or ``results`` (read from the file's schema)."""
        import pyarrow.parquet as pq

        path = {"per_query": self.per_query_file, "results": self.results_file}[table]
        if not path.is_file():
            raise NotFoundError(f"run {self.run_id!r} has no {path.name}", field="run")
        return list(pq.read_schema(path).names)

    def evaluation(self, metrics: Sequence[str] | None = None) -> Evaluation:
        """Per-query values of the summary's metrics (or ``metrics``), over the judged queries."""
        import numpy as np

        from searchtrace.evals.scoring.metrics import Evaluation

        names = list(metrics) if metrics is not None else list(self.summary().metrics)
        table = self.per_query(["query_id", *names])
        missing = [m for m in names if m not in table]
        if missing:
            raise DataError(str(self.per_query_file), None, f"no column for metric {', '.join(missing)}")
        judged = table.dropna(subset=names)
        return Evaluation.from_arrays(judged["query_id"].tolist(),
                                      {m: judged[m].to_numpy(np.float64) for m in names})

    # -- writes --------------------------------------------------------------

    def create(self, settings: EvalSettings) -> None:
        """Make the folder and write its settings (the first file of a run)."""
        self.path.mkdir(parents=True, exist_ok=True)
        payload = json.dumps(settings.to_json(), indent=2).encode()
        write_atomic(self.settings_file, lambda tmp: tmp.write_bytes(payload))

    def append(self, records: Sequence[JournalRecord]) -> None:
        """Journal completed records (fsync'd)."""
        self.journal.append(records)

    def write_tables(self, per_query: pd.DataFrame, results: pd.DataFrame) -> None:
        """Write ``per_query.parquet`` and ``results.parquet``."""
        write_atomic(self.per_query_file, lambda tmp: per_query.to_parquet(tmp, index=False))
        write_atomic(self.results_file, lambda tmp: results.to_parquet(tmp, index=False))

    def write_run_file(self, run: Run, tag: str) -> None:
        """Write ``run.trec`` (``tag`` in its last column) and the same rankings as ``rankings.parquet``."""
        from searchtrace.evals.runs.runfolder.rankings_table import write_rankings
        from searchtrace.evals.runs.trec import write_run

        write_atomic(self.run_file, lambda tmp: write_run(tmp, run, tag))
        write_atomic(self.path / self.RANKINGS, lambda tmp: write_rankings(tmp, run))

    def rankings(self) -> Run:
        """Every query's ranking: from ``rankings.parquet``, else (a run written before it) ``run.trec``.

        Raises:
            NotFoundError: the run has neither file.
            DataError: the file read is damaged, naming it.
        """
        from searchtrace.evals.runs.runfolder.rankings_table import read_rankings
        from searchtrace.evals.runs.trec import read_run
        from searchtrace.evals.scoring.rankings import Run

        table = self.path / self.RANKINGS
        if table.is_file():
            return read_rankings(table)
        if not self.run_file.is_file():
            raise NotFoundError(f"run {self.run_id!r} has no {self.RUN_FILE}", field="run")
        if self.run_file.stat().st_size == 0:  # no query got a result
            return Run.from_arrays([], [], [])
        return read_run(self.run_file)

    def write_summary(self, summary: RunSummary) -> None:
        """Write ``run.json``, with the sha256 and size of every other file: the run is complete once this returns."""
        from dataclasses import replace

        payload = json.dumps(replace(summary, files=self.digests()).to_json(), indent=2).encode()
        write_atomic(self.summary_file, lambda tmp: tmp.write_bytes(payload))

    def _json(self, path: Path) -> object:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise NotFoundError(f"{path}: missing (not a run folder, or the run has not finished)",
                                field="run") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise DataError(str(path), None, f"cannot read: {exc}") from None
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(str(path), exc.lineno, f"invalid JSON: {exc.msg}") from None


def _sha256(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError as exc:
        raise DataError(str(path), None, f"cannot read: {exc}") from None


def _parquet(path: Path, columns: Sequence[str] | None, run_id: str) -> pd.DataFrame:
    import pandas as pd

    if not path.is_file():
        raise NotFoundError(f"run {run_id!r} has no {path.name}", field="run")
    try:
        if columns is None:
            return pd.read_parquet(path)
        import pyarrow.parquet as pq

        present = set(pq.read_schema(path).names)
        return pd.read_parquet(path, columns=[c for c in columns if c in present])
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise DataError(str(path), None, f"cannot read the table: {exc}") from None
