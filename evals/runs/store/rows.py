"""The shared store's run rows read back and checked, field by field, before anything uses them.

Anyone who can write to the team's store can put any value in a row, so a row
is foreign input: each value is checked for its type and its bounds (ids
non-empty text without control characters, file names plain names, sizes and
hashes of the bytes they come with, a ranking's documents in the run's
vocabulary, scores numbers), and one that fails is a
:class:`~searchtrace.errors.DataError` naming the store, the table, the run and
the field: never used, never a traceback.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from searchtrace.errors import DataError, ValidationError
from searchtrace.evals.runs.runfolder import RunFolder, RunSummary
from searchtrace.evals.runs.store.entry import RunEntry
from searchtrace.evals.runs.store.snapshot import RunFile, sha256
from searchtrace.safepaths import checked_part

if TYPE_CHECKING:
    from searchtrace.evals.scoring.rankings import Run

__all__ = ["entry_from_row", "files_from_rows", "head_from_row", "listed_files", "metrics_from_rows",
           "rankings_from_rows", "summary_from_files"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_SHOWN = 80  # characters of a refused value shown


class _Row:
    """One row of one table, for messages: ``store ...: st_run_files row 3 of run 'r'``."""

    def __init__(self, where: str, table: str, run_id: object, number: int | tuple[int, int] | None = None) -> None:
        of = f" of run {run_id!r:.{_SHOWN}}" if run_id is not None else ""
        rows = "row" if number is None else f"row {number}" if isinstance(number, int) else "rows {} and {}".format(
            *number)
        self.name = f"{where}: {table} {rows}{of}"

    def error(self, field: str, what: str) -> DataError:
        return DataError(self.name, None, f"{field}: {what}")

    def refuse(self, field: str, expected: str, got: object) -> DataError:
        return self.error(field, f"expected {expected}, got {got!r:.{_SHOWN}}")

    def id(self, field: str, value: object) -> str:
        """Non-empty text without control characters (an id, a name)."""
        if not isinstance(value, str) or not value or _CONTROL.search(value) or not _utf8(value):
            raise self.refuse(field, "non-empty text without control characters", value)
        return value

    def opt_id(self, field: str, value: object) -> str | None:
        return None if value is None else self.id(field, value)

    def ids(self, field: str, value: object) -> list[str]:
        if not isinstance(value, list):
            raise self.refuse(field, "a list of ids", value)
        return [self.id(f"{field}[{i}]", v) for i, v in enumerate(value)]

    def time(self, field: str, value: object) -> datetime:
        if not isinstance(value, datetime) or value.tzinfo is None:
            raise self.refuse(field, "a time with its time zone", value)
        return value.astimezone(UTC)

    def size(self, field: str, value: object) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise self.refuse(field, "a size >= 0", value)
        return value

    def digest(self, field: str, value: object) -> str:
        if not isinstance(value, str) or not _SHA256.match(value):
            raise self.refuse(field, "64 lowercase hex digits", value)
        return value

    def score(self, field: str, value: object) -> float:
        if not isinstance(value, float) or math.isnan(value):
            raise self.refuse(field, "a number (float8, not NaN)", value)
        return value

    def file_name(self, value: object) -> str:
        try:
            return checked_part(value, "file name")
        except ValidationError as exc:
            raise self.error("name", exc.message) from None


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no file could hold it
        return False
    return True


def _width(row: object, n: int, table: _Row) -> Sequence[Any]:
    if not isinstance(row, (tuple, list)) or len(row) != n:
        raise table.refuse("row", f"{n} columns", row)
    return row


def entry_from_row(row: object, where: str) -> RunEntry:
    """A run as ``st_runs`` lists it: (run_id, name, summary's tags, created_at, dataset, mode).

    Raises:
        DataError: a value of the wrong type or out of bounds, naming the run and the field.
    """
    t = _Row(where, "st_runs", None)
    run_id, name, tags, created_at, dataset, mode = _width(row, 6, t)
    t = _Row(where, "st_runs", run_id)
    run_id = t.id("run_id", run_id)
    return RunEntry(run_id, t.opt_id("name", name), tuple(t.ids("summary.tags", [] if tags is None else tags)),
                    t.time("created_at", created_at), t.id("dataset", dataset), "" if mode is None else t.id("mode", mode))


def head_from_row(run_id: str, row: object, where: str) -> tuple[datetime, str, object]:
    """(created_at, trec_tag, doc_ids) of the run's ``st_runs`` row, the first two checked (the third is
    :func:`rankings_from_rows`').

    Raises:
        DataError: a time without its zone, a tag that is no id, naming the run and the field.
    """
    t = _Row(where, "st_runs", run_id)
    created_at, tag, doc_ids = _width(row, 3, t)
    return t.time("created_at", created_at), t.id("trec_tag", tag), doc_ids


def listed_files(run_id: str, rows: Sequence[object], where: str) -> tuple[RunFile, ...] | None:
    """The files ``st_run_files`` lists for the run (name, sha256, size), content not read; None: none.

    Raises:
        DataError: a bad name (not one plain file name), hash or size, or a name twice, naming the row.
    """
    out: list[RunFile] = []
    for number, row in enumerate(rows, 1):
        t = _Row(where, "st_run_files", run_id, number)
        name, digest, size = _width(row, 3, t)
        out.append(RunFile(t.file_name(name), t.digest("sha256", digest), t.size("size", size)))
    _unique_names(out, run_id, where)
    return tuple(out) or None


def files_from_rows(run_id: str, rows: Sequence[object], rebuilt: dict[str, bytes], where: str) -> tuple[RunFile, ...]:
    """Every file of the run with its bytes (``rebuilt``'s for a row without content), each checked against
    the sha256 and size its row records.

    Raises:
        DataError: a bad row, bytes that do not match it, a name twice or no ``run.json``, naming the row.
    """
    out = []
    for number, row in enumerate(rows, 1):
        t = _Row(where, "st_run_files", run_id, number)
        name, digest, size, content = _width(row, 4, t)
        name, digest, size = t.file_name(name), t.digest("sha256", digest), t.size("size", size)
        if content is not None and not isinstance(content, (bytes, bytearray, memoryview)):
            raise t.refuse("content", "bytes or null", content)
        data = bytes(content) if content is not None else rebuilt.get(name)
        if data is None:
            raise t.error("content", f"null, and {name} is not a file the rankings rebuild")
        if len(data) != size:
            raise t.error("size", f"{size}, but the {'content' if content is not None else 'rebuilt file'} "
                                  f"has {len(data)} bytes" + ("" if content is not None else
                                                              " (st_run_rankings, or st_runs, damaged?)"))
        if sha256(data) != digest:
            raise t.error("sha256", f"the store's copy of {name} does not match it" if content is not None else
                          f"{name} rebuilt from st_run_rankings (and st_runs' doc_ids and trec_tag) does not "
                          "match it: those rows are damaged")
        out.append(RunFile(name, digest, size, data))
    _unique_names(out, run_id, where)
    if not any(f.name == RunFolder.SUMMARY for f in out):
        raise _Row(where, "st_run_files", run_id).error("name", f"no {RunFolder.SUMMARY} among the run's files")
    return tuple(out)


def _unique_names(files: Sequence[RunFile], run_id: str, where: str) -> None:
    seen: dict[str, int] = {}
    for number, f in enumerate(files, 1):
        first = seen.setdefault(f.name, number)
        if first != number:
            raise _Row(where, "st_run_files", run_id, (first, number)).error("name", f"{f.name!r} listed twice")


def summary_from_files(run_id: str, files: Sequence[RunFile], where: str) -> RunSummary:
    """The run's ``run.json`` among ``files`` (checked by :func:`files_from_rows`), read, of the run asked for.

    Raises:
        DataError: not JSON, not a run summary, or the summary of another run, naming it.
    """
    path = f"{where}: run {run_id!r}: {RunFolder.SUMMARY}"
    content = next(f.content for f in files if f.name == RunFolder.SUMMARY) or b""
    try:
        data = json.loads(content.decode("utf-8"))
    except UnicodeDecodeError:
        raise DataError(path, None, "not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise DataError(path, exc.lineno, f"invalid JSON: {exc.msg}") from None
    summary = RunSummary.from_json(data, path)
    if summary.run_id != run_id:
        raise DataError(path, None, f"run_id: {summary.run_id!r:.{_SHOWN}}, not the run read")
    return summary


def rankings_from_rows(run_id: str, ranked: Sequence[object], doc_ids: object, where: str) -> Run:
    """The run ``st_run_rankings`` holds (query_id, doc_ids, scores per row), its documents coded in the order of
    ``st_runs.doc_ids`` (as the folder's run had them).

    Raises:
        DataError: an id that is not one, a document not in ``doc_ids``, a query or a document twice, a score
            that is no number, or unequal lists, naming the row and the field.
    """
    from searchtrace.evals.scoring.rankings import Run

    head = _Row(where, "st_runs", run_id)
    vocab = head.ids("doc_ids", doc_ids)
    code: dict[str, int] = {}
    for i, doc in enumerate(vocab):
        if code.setdefault(doc, i) != i:
            raise head.error(f"doc_ids[{i}]", f"{doc!r:.{_SHOWN}} listed twice")
    queries: list[str] = []
    seen: set[str] = set()
    codes: list[int] = []
    scores: list[float] = []
    lengths: list[int] = []
    for number, row in enumerate(ranked, 1):
        t = _Row(where, "st_run_rankings", run_id, number)
        query, docs, values = _width(row, 3, t)
        query = t.id("query_id", query)
        if query in seen:
            raise t.error("query_id", f"{query!r:.{_SHOWN}} ranked twice")
        seen.add(query)
        docs = t.ids("doc_ids", docs)
        if not isinstance(values, list) or len(values) != len(docs):
            raise t.refuse("scores", f"a list of {len(docs)} numbers, one per document", values)
        row_codes = [code.get(d, -1) for d in docs]
        if -1 in row_codes:
            missing = docs[row_codes.index(-1)]
            raise t.error("doc_ids", f"{missing!r:.{_SHOWN}} is not in st_runs.doc_ids")
        if len(set(row_codes)) != len(row_codes):
            raise t.error("doc_ids", "a document ranked twice")
        queries.append(query)
        codes.extend(row_codes)
        scores.extend(t.score(f"scores[{i}]", v) for i, v in enumerate(values))
        lengths.append(len(docs))
    query_vocab = np.empty(len(queries), dtype=object)
    query_vocab[:] = queries
    doc_vocab = np.empty(len(vocab), dtype=object)
    doc_vocab[:] = vocab
    return Run.from_codes(query_vocab, doc_vocab, np.repeat(np.arange(len(queries), dtype=np.int32), lengths),
                          np.array(codes, dtype=np.int32), np.array(scores, dtype=np.float64), copy=False)


def metrics_from_rows(run_id: str, rows: Sequence[object], where: str) -> dict[str, tuple[list[str], np.ndarray]]:
    """Each metric's judged queries and values (``st_run_metrics``: metric, query_id, value per row).

    Raises:
        DataError: a bad metric name or query id, a value that is no finite number, or a pair twice.
    """
    grouped: dict[str, tuple[list[str], list[float]]] = {}
    seen: set[tuple[str, str]] = set()
    for number, row in enumerate(rows, 1):
        t = _Row(where, "st_run_metrics", run_id, number)
        metric, query, value = _width(row, 3, t)
        metric, query = t.id("metric", metric), t.id("query_id", query)
        if not isinstance(value, float) or not math.isfinite(value):
            raise t.refuse("value", "a finite number", value)
        if (metric, query) in seen:
            raise t.error("query_id", f"{query!r:.{_SHOWN}} has two values of {metric}")
        seen.add((metric, query))
        ids, values = grouped.setdefault(metric, ([], []))
        ids.append(query)
        values.append(value)
    return {m: (ids, np.array(values, dtype=np.float64)) for m, (ids, values) in grouped.items()}
