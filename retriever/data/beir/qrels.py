"""``qrels/<split>.tsv``: relevance judgments ``query-id<TAB>corpus-id<TAB>score``."""

from __future__ import annotations

from collections.abc import Container, Iterator
from pathlib import Path

from searchtrace.errors import DataError
from searchtrace.limits import MAX_TREC_LINE_BYTES
from searchtrace.retriever.data.beir._fields import check_id
from searchtrace.retriever.data.beir._lines import lines
from searchtrace.retriever.data.beir.report import IssueKind, QrelsIssue, QrelsReport

__all__ = ["QRELS_HEADER", "filter_qrels", "load_qrels"]

QRELS_HEADER = ("query-id", "corpus-id", "score")


def load_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Read a qrels TSV ``query-id<TAB>corpus-id<TAB>score`` (header optional).

    Returns:
        ``{query_id: {doc_id: grade}}`` with integer grades.

    Raises:
        DataError: a row without 3 fields, an empty id, a non-integer grade,
            a duplicate pair, or no rows at all.
    """
    qrels: dict[str, dict[str, int]] = {}
    for _, query_id, doc_id, grade in _qrels_rows(Path(path)):
        qrels.setdefault(query_id, {})[doc_id] = grade
    return qrels


def filter_qrels(
    path: Path, query_ids: Container[str], doc_ids: Container[str]
) -> tuple[dict[str, dict[str, int]], QrelsReport]:
    """Load qrels, dropping (and reporting) rows with unknown ids."""
    qrels: dict[str, dict[str, int]] = {}
    issues: list[QrelsIssue] = []
    for number, query_id, doc_id, grade in _qrels_rows(path):
        bad = []
        if query_id not in query_ids:
            bad.append(IssueKind.UNKNOWN_QUERY)
        if doc_id not in doc_ids:
            bad.append(IssueKind.UNKNOWN_DOC)
        issues.extend(QrelsIssue(str(path), number, query_id, doc_id, kind) for kind in bad)
        if not bad:
            qrels.setdefault(query_id, {})[doc_id] = grade
    return qrels, QrelsReport(tuple(issues))


def _qrels_rows(path: Path) -> Iterator[tuple[int, str, str, int]]:
    """Yield ``(line_number, query_id, doc_id, grade)``; a header may only be the first line."""
    pairs: dict[tuple[str, str], int] = {}
    first = True
    for number, raw in lines(path, MAX_TREC_LINE_BYTES):
        fields = _split_row(path, number, raw)
        if first and tuple(fields) == QRELS_HEADER:
            first = False
            continue
        first = False
        query_id, doc_id, grade = _parse_row(path, number, fields)
        seen = pairs.setdefault((query_id, doc_id), number)
        if seen != number:
            raise DataError(str(path), number, f"duplicate pair ({query_id!r}, {doc_id!r}) (first on line {seen})")
        yield number, query_id, doc_id, grade
    if not pairs:
        raise DataError(str(path), 1, "empty file: expected at least one judgment")


def _split_row(path: Path, number: int, raw: bytes) -> list[str]:
    """The tab-separated fields of one line, stripped."""
    try:
        return [f.strip() for f in raw.decode("utf-8").rstrip("\r\n").split("\t")]
    except UnicodeDecodeError as exc:
        raise DataError(str(path), number, f"not UTF-8: {exc.reason}") from None


def _parse_row(path: Path, number: int, fields: list[str]) -> tuple[str, str, int]:
    """``(query_id, doc_id, grade)`` from one data row's fields."""
    if len(fields) != 3:
        raise DataError(
            str(path), number, f"expected 3 tab-separated fields (query-id, corpus-id, score), got {len(fields)}"
        )
    query_id, doc_id, score = fields
    if not query_id or not doc_id:
        raise DataError(str(path), number, "empty query-id or corpus-id")
    check_id(path, number, "query-id", query_id)
    check_id(path, number, "corpus-id", doc_id)
    try:
        grade = int(score)
    except ValueError:
        raise DataError(str(path), number, f"score must be an integer, got {score!r}") from None
    return query_id, doc_id, grade
