"""Read and write TREC run and qrels files.

* Run: ``qid Q0 docid rank score tag``, whitespace-separated. The ``Q0``,
  ``rank`` and ``tag`` columns are read past: ranking comes from the scores.
  Scores are read as 64-bit floats (as trec_eval 10; trec_eval 9 and
  pytrec_eval read 32-bit floats, so 1.00000001 and 1.0 tie there, not here).
* Qrels: TREC ``qid 0 docid grade``, or BEIR TSV ``query-id<TAB>corpus-id<TAB>score``
  (header optional), told apart by the first non-blank line.

A line whose first non-blank character is ``#`` is a comment (trec_eval 10's
rule; a ``#`` inside an id is part of the id). Ids must not contain control
characters (NUL included). A line is at most
:data:`~searchtrace.limits.MAX_TREC_LINE_BYTES` long and an id at most
:data:`~searchtrace.limits.MAX_ID_BYTES` (UTF-8 bytes), checked before the line is split. ``read_run(..., extra_fields=True)`` ignores fields
after the sixth, as trec_eval does; by default a line must have exactly six.

Large well-formed files take the column reader (see :mod:`evals.trec.columns`);
anything it cannot vouch for is re-read line by line, and a malformed line
raises :class:`~searchtrace.errors.DataError` naming the file, the 1-based line
and what is wrong, whichever reader ran first. Blank and comment lines are
skipped but counted.
"""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Callable, Iterator
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from searchtrace.errors import DataError, ValidationError
from searchtrace.evals.scoring.interning import intern
from searchtrace.evals.scoring.rankings import CONTROL, Qrels, Run, duplicate_row
from searchtrace.limits import MAX_ID_BYTES, MAX_TREC_LINE_BYTES, id_too_long, line_too_long

if TYPE_CHECKING:
    from searchtrace.evals.runs.trec.columns import Columns

__all__ = ["qrels_lines", "read_qrels", "read_run", "write_run"]

BEIR_HEADER = ("query-id", "corpus-id", "score")
_NO_SPACE = re.compile(r"\S+")
COLUMN_READER_BYTES = 1 << 16
"""Files at least this large take the columnar reader (below it, the line reader is as fast)."""


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, without a UTF-8 byte order mark."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataError(str(path), None, f"cannot read file: {exc.strerror}") from None
    return data[len(codecs.BOM_UTF8) :] if data.startswith(codecs.BOM_UTF8) else data


class _Layout(NamedTuple):
    """Where the fields of one line kind are, and how its value parses."""

    width: int
    fields: str
    value_index: int
    parse: Callable[[str], float | int]
    what: str
    extra_fields: bool = False


def _score(token: str) -> float:
    result = float(token)
    if result != result:
        raise ValueError("NaN")
    return result


_RUN = _Layout(6, "qid Q0 docid rank score tag", 4, _score, "score must be a number (not NaN)")
_QRELS = _Layout(4, "qid 0 docid grade", 3, int, "grade must be an integer")


def _check_length(path: Path, number: int, raw: bytes) -> None:
    """Refuse a line past :data:`~searchtrace.limits.MAX_TREC_LINE_BYTES`, before it is split."""
    if len(raw) > MAX_TREC_LINE_BYTES:
        raise DataError(str(path), number, line_too_long(MAX_TREC_LINE_BYTES))


def _check_line_ids(path: Path, number: int, qid: str, docid: str) -> None:
    for value, what in ((qid, "query id"), (docid, "doc id")):
        if len(value) * 4 > MAX_ID_BYTES and (size := len(value.encode("utf-8", "surrogatepass"))) > MAX_ID_BYTES:
            raise DataError(str(path), number, id_too_long(what, size))
        bad = CONTROL.search(value)
        if bad:
            raise DataError(str(path), number,
                            f"{what} {value!r} contains a control character (U+{ord(bad.group()):04X})")


def _rows(path: Path, data: bytes, layout: _Layout) -> Iterator[tuple[int, str, str, float | int]]:
    """Yield ``(line, qid, docid, value)`` of every non-blank, non-comment line, checked."""
    for number, raw in enumerate(data.split(b"\n"), start=1):
        _check_length(path, number, raw)
        parts = raw.split()
        if not parts or parts[0].startswith(b"#"):
            continue
        if len(parts) != layout.width and not (layout.extra_fields and len(parts) > layout.width):
            at_least = "at least " if layout.extra_fields else ""
            expected = f"expected {at_least}{layout.width} whitespace-separated fields ({layout.fields})"
            raise DataError(str(path), number, f"{expected}, got {len(parts)}")
        try:
            qid, docid, token = parts[0].decode(), parts[2].decode(), parts[layout.value_index].decode()
        except UnicodeDecodeError as exc:
            raise DataError(str(path), number, f"not UTF-8: {exc.reason}") from None
        _check_line_ids(path, number, qid, docid)
        try:
            value = layout.parse(token)
        except ValueError:
            raise DataError(str(path), number, f"{layout.what}, got {token!r}") from None
        yield number, qid, docid, value


def _exact(path: Path, data: bytes, layout: _Layout) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list]:
    """Line-by-line parse; raises DataError at the first malformed line."""
    seen: dict[tuple[str, str], int] = {}
    qids, docids, values = [], [], []
    for number, qid, docid, value in _rows(path, data, layout):
        first = seen.setdefault((qid, docid), number)
        if first != number:
            raise DataError(str(path), number, f"duplicate (qid, docid) ({qid!r}, {docid!r}), first on line {first}")
        qids.append(qid)
        docids.append(docid)
        values.append(value)
    if not values:
        raise DataError(str(path), None, f"empty file: expected lines '{layout.fields}'")
    queries, query_index = intern(qids)
    docs, doc_index = intern(docids)
    return queries, docs, query_index, doc_index, values


def _by_columns(data: bytes, width: int, value_column: int, kind: str) -> Columns | None:
    """The columnar reader's answer for a large file, or None (a small file, or one it cannot vouch for)."""
    if len(data) < COLUMN_READER_BYTES:
        return None
    from searchtrace.evals.runs.trec import columns

    cols = columns.parse_columns(data, width, (0, 2), value_column, kind)
    if cols is None or duplicate_row(cols.query_index, cols.doc_index, len(cols.docs)) is not None:
        return None
    return cols


def read_run(path: str | os.PathLike[str], *, extra_fields: bool = False) -> Run:
    """Read a TREC run file ``qid Q0 docid rank score tag``.

    Args:
        path: the file.
        extra_fields: accept (and ignore) fields after the sixth, as trec_eval does.

    Raises:
        DataError: unreadable or empty file, a line without 6 fields, a
            non-numeric or NaN score, a control character in an id, or a
            repeated (qid, docid).
    """
    path = Path(path)
    data = _read_bytes(path)
    cols = _by_columns(data, 6, 4, "float")
    if cols is not None:
        return Run.from_codes(cols.queries, cols.docs, cols.query_index, cols.doc_index, cols.values, copy=False)
    layout = _RUN._replace(extra_fields=True) if extra_fields else _RUN
    queries, docs, query_index, doc_index, scores = _exact(path, data, layout)
    return Run.from_codes(queries, docs, query_index, doc_index, np.array(scores, dtype=np.float64), copy=False)


def _first_line(data: bytes) -> bytes:
    """The first non-blank, non-comment line (without its newline), or b""."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        line = data[start:end].strip()
        if line and not line.startswith(b"#"):
            return data[start:end]
        start = end + 1
    return b""


def _is_beir(path: Path, data: bytes) -> bool:
    """Whether ``data`` is BEIR TSV (True) or TREC qrels (False), from its first line.

    Raises:
        DataError: an empty file, or a first line of neither kind.
    """
    first = _first_line(data)
    if not first:
        raise DataError(str(path), None, "empty file: expected qrels lines")
    if b"\t" in first and len(first.split(b"\t")) == 3:
        return True
    if len(first.split()) != 4:
        raise DataError(
            str(path), None, f"not a qrels file: expected TREC '{_QRELS.fields}' or BEIR TSV '{' '.join(BEIR_HEADER)}'"
        )
    return False


def read_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Read TREC qrels ``qid 0 docid grade`` or BEIR TSV ``query-id corpus-id score``.

    BEIR is recognised by its header or by 3 tab-separated fields on the
    first non-blank line; TREC by 4 whitespace-separated fields.

    Raises:
        DataError: unreadable or empty file, a line with the wrong number of
            fields, a non-integer grade, or a repeated (qid, docid).
    """
    path = Path(path)
    data = _read_bytes(path)
    if _is_beir(path, data):
        return _read_beir(path, data, _first_line(data))
    cols = _by_columns(data, 4, 3, "int")
    if cols is not None:
        return Qrels.from_codes(cols.queries, cols.docs, cols.query_index, cols.doc_index, cols.values, copy=False)
    queries, docs, query_index, doc_index, grades = _exact(path, data, _QRELS)
    return Qrels.from_codes(queries, docs, query_index, doc_index, np.array(grades, dtype=np.int64), copy=False)


def qrels_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, str, str, int]]:
    """``(line, qid, docid, grade)`` of every judgment of a TREC or BEIR qrels file, checked as :func:`read_qrels` does.

    For a caller that must name the line of a judgment it refuses.

    Raises:
        DataError: what :func:`read_qrels` raises, at the line it is found.
    """
    path = Path(path)
    data = _read_bytes(path)
    rows = _beir_lines(path, data) if _is_beir(path, data) else _rows(path, data, _QRELS)
    for number, qid, docid, grade in _once_each(path, rows):
        yield number, qid, docid, int(grade)


def _once_each(path: Path, rows: Iterator[tuple[int, str, str, float | int]]) -> Iterator[tuple[int, str, str, float | int]]:
    """``rows``, refusing a repeated (qid, docid) and a file without any."""
    seen: dict[tuple[str, str], int] = {}
    for number, qid, docid, value in rows:
        if seen.setdefault((qid, docid), number) != number:
            raise DataError(str(path), number, f"duplicate (qid, docid) ({qid!r}, {docid!r}), first on line {seen[(qid, docid)]}")
        yield number, qid, docid, value
    if not seen:
        raise DataError(str(path), None, "empty file: expected at least one judgment")


def _read_beir(path: Path, data: bytes, first: bytes) -> Qrels:
    header = tuple(f.strip() for f in first.decode("utf-8", "replace").split("\t")) == BEIR_HEADER
    if data.startswith(first) and len(data) >= COLUMN_READER_BYTES:
        from searchtrace.evals.runs.trec import columns

        body = data[len(first) :] if header else data
        cols = columns.parse_tsv(body.lstrip(b"\r\n"), (0, 1), 2)
        if cols is not None and duplicate_row(cols.query_index, cols.doc_index, len(cols.docs)) is None:
            return Qrels.from_codes(cols.queries, cols.docs, cols.query_index, cols.doc_index, cols.values, copy=False)
    return Qrels.from_dict(_beir_rows(path, data))


def _beir_rows(path: Path, data: bytes) -> dict[str, dict[str, int]]:
    """BEIR TSV as ``{qid: {docid: grade}}``, checked."""
    qrels: dict[str, dict[str, int]] = {}
    for _, qid, docid, grade in _once_each(path, _beir_lines(path, data)):
        qrels.setdefault(qid, {})[docid] = int(grade)
    return qrels


def _beir_lines(path: Path, data: bytes) -> Iterator[tuple[int, str, str, int]]:
    """``(line, qid, docid, grade)`` of BEIR TSV line by line (fields stripped, a header on the first line skipped)."""
    first = True
    for number, raw in enumerate(data.split(b"\n"), start=1):
        _check_length(path, number, raw)
        try:
            fields = [f.strip() for f in raw.decode("utf-8").rstrip("\r").split("\t")]
        except UnicodeDecodeError as exc:
            raise DataError(str(path), number, f"not UTF-8: {exc.reason}") from None
        if fields == [""] or fields[0].startswith("#"):
            continue
        if first and tuple(fields) == BEIR_HEADER:
            first = False
            continue
        first = False
        if len(fields) != 3:
            raise DataError(str(path), number,
                            f"expected 3 tab-separated fields ({', '.join(BEIR_HEADER)}), got {len(fields)}")
        qid, docid, score = fields
        if not qid or not docid:
            raise DataError(str(path), number, "empty query-id or corpus-id")
        _check_line_ids(path, number, qid, docid)
        try:
            grade = int(score)
        except ValueError:
            raise DataError(str(path), number, f"score must be an integer, got {score!r}") from None
        yield number, qid, docid, grade


def _numbers(last: int) -> list[str]:
    """``str(i)`` for every ``i`` up to ``last``, by index (a run's ranks repeat in every query)."""
    return [str(i) for i in range(last + 1)]


def write_run(path: str | os.PathLike[str], run: Run, tag: str) -> None:
    """Write ``run`` as TREC lines in ranking order, ranks from 1 per query.

    Scores are written with ``repr`` so they read back bit for bit.

    Raises:
        ValidationError: a tag or id that is empty or contains whitespace.
    """
    for value, what in [(tag, "tag"), *((q, "query id") for q in run.queries), *((d, "doc id") for d in run.docs)]:
        if not _NO_SPACE.fullmatch(value):
            raise ValidationError(f"{what} {value!r} must be non-empty without whitespace", field=what)
    query_index = run.query_index
    starts = np.flatnonzero(np.r_[True, query_index[1:] != query_index[:-1]])
    ranks = np.arange(len(run)) - np.repeat(starts, np.diff(np.r_[starts, len(run)])) + 1
    # "<query> Q0 <doc> <rank> <repr(score)> <tag>\n", each line joined in C
    lines = map(" ".join, zip(
        run.queries[query_index].tolist(),
        repeat("Q0"),
        run.docs[run.doc_index].tolist(),
        map(_numbers(int(ranks.max()) if len(ranks) else 0).__getitem__, ranks.tolist()),
        map(repr, run.scores.tolist()),
        repeat(f"{tag}\n"),
    ))
    with Path(path).open("w", encoding="utf-8") as handle:
        handle.writelines(lines)
