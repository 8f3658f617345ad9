"""Rankings and their judgments: a :class:`Run` and its :class:`Qrels` as parallel arrays over interned ids.

Ids are interned once, when a container is built: each holds its vocabularies
(``queries``, ``docs``: object arrays of ``str`` in first-seen order) and one
int32 code per row into them. A :class:`Run` keeps its rows in ranking order:
grouped by query, then by score descending, then by document id descending
(trec_eval's order), so evaluation never sorts again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from searchtrace.errors import ValidationError
from searchtrace.evals.scoring.interning import intern

__all__ = ["CONTROL", "Qrels", "Run"]

CONTROL = re.compile(r"[\x00-\x1f\x7f]")
"""A control character (NUL included): never part of a query or document id."""


def _frozen(array: np.ndarray, dtype: type | None = None, copy: bool = True) -> np.ndarray:
    """``array`` made read-only; a copy unless ``copy=False`` hands it over."""
    array = np.array(array, dtype=dtype, copy=True if copy else None)
    array.setflags(write=False)
    return array


def _check_ids(vocab: np.ndarray, what: str) -> None:
    for value in vocab:
        if not isinstance(value, str) or not value:
            raise ValidationError(f"{what} ids must be non-empty strings, got {value!r}", field=what)
    if CONTROL.search("".join(vocab.tolist())):  # one scan; the loop below only names the culprit
        bad = next(v for v in vocab.tolist() if CONTROL.search(v))
        raise ValidationError(f"{what} id {bad!r} contains a control character", field=what)


def duplicate_row(query_index: np.ndarray, doc_index: np.ndarray, n_docs: int) -> int | None:
    """Index of the first row repeating an earlier (query, doc) pair, or None."""
    keys = query_index.astype(np.int64)
    keys *= max(n_docs, 1)
    keys += doc_index
    ordered = keys.copy()
    ordered.sort()  # in place: these arrays are large and memory-bound
    if len(keys) < 2 or not np.any(ordered[1:] == ordered[:-1]):
        return None
    order = np.argsort(keys, kind="stable")
    repeats = np.flatnonzero(keys[order][1:] == keys[order][:-1]) + 1
    return int(order[repeats].min())


def rank_order(
    query_index: np.ndarray, doc_index: np.ndarray, scores: np.ndarray, docs: np.ndarray
) -> np.ndarray | None:
    """Permutation putting rows in (query, score desc, doc id desc) order; None if they are.

    Runs are usually written grouped and scored in order already; then only
    the rows tied on score are re-sorted, by document id.
    """
    n = len(scores)
    same_query = query_index[1:] == query_index[:-1]
    order = None
    q, s = query_index, scores
    if not (np.all(query_index[1:] >= query_index[:-1]) and np.all(~same_query | (scores[1:] <= scores[:-1]))):
        order = np.lexsort((-scores, query_index))
        q, s = query_index[order], scores[order]
        same_query = q[1:] == q[:-1]
    tied_to_previous = np.zeros(n + 1, dtype=bool)
    tied_to_previous[1:n] = same_query & (s[1:] == s[:-1])
    if tied_to_previous.any():
        order = np.arange(n) if order is None else order
        _break_ties(order, tied_to_previous, docs, doc_index[order])
    return order


def _break_ties(order: np.ndarray, tied_to_previous: np.ndarray, docs: np.ndarray, codes: np.ndarray) -> None:
    """Sort each run of tied rows of ``order`` by document id, descending, in place.

    ``docs[codes[i]]`` is the id of row ``i``: only tied rows' ids are gathered.
    Python ``str`` order is code point order, i.e. UTF-8 byte order: trec_eval's
    ``strcmp``. Most ties are pairs, settled by one vectorised comparison.
    """
    rows = np.flatnonzero(tied_to_previous[:-1] | tied_to_previous[1:])
    first = np.flatnonzero(~tied_to_previous[rows])  # index into rows of each tie's first row
    size = np.diff(np.r_[first, len(rows)])
    a = rows[first[size == 2]]
    swap = a[docs[codes[a]] < docs[codes[a + 1]]]
    order[swap], order[swap + 1] = order[swap + 1], order[swap].copy()
    big = rows[np.repeat(size > 2, size)]
    if len(big):
        group = np.repeat(np.arange(len(first)), size)[np.repeat(size > 2, size)]
        _, rank = np.unique(docs[codes[big]].astype(str), return_inverse=True)
        order[big] = order[big][np.lexsort((-rank, group))]


def _interned(query_ids: Iterable[str], doc_ids: Iterable[str], values: Sequence[object] | np.ndarray, what: str,
              value_name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Intern both id columns and check them against the values: lengths, ids, no repeated pair."""
    queries, query_index = intern(query_ids)
    docs, doc_index = intern(doc_ids)
    if not len(query_index) == len(doc_index) == len(values):
        raise ValidationError(f"query ids, doc ids and {value_name} must have the same length", field=what)
    _check_ids(queries, "query")
    _check_ids(docs, "doc")
    row = duplicate_row(query_index, doc_index, len(docs))
    if row is not None:
        pair = (queries[query_index[row]], docs[doc_index[row]])
        raise ValidationError(f"duplicate (query, doc) pair {pair!r} in {what}", field=what)
    return queries, docs, query_index, doc_index


def _columns(nested: Mapping[str, Mapping[str, object]]) -> tuple[list, list, list]:
    """``{query: {doc: value}}`` as three parallel columns."""
    rows = [(q, d, v) for q, docs in nested.items() for d, v in docs.items()]
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


def _nested(queries: np.ndarray, docs: np.ndarray, query_index: np.ndarray, doc_index: np.ndarray,
            values: list[Any]) -> dict[str, dict[str, Any]]:
    """Rows back to ``{query: {doc: value}}``, dicts in row order."""
    out: dict[str, dict[str, Any]] = {}
    for q, d, v in zip(queries[query_index], docs[doc_index], values):
        out.setdefault(q, {})[d] = v
    return out


@dataclass(frozen=True, eq=False)
class Run:
    """Scored documents per query, rows in ranking order.

    Attributes:
        queries: query ids, first-seen order.
        docs: document ids, first-seen order.
        query_index: (n,) int32 code of each row's query; non-decreasing.
        doc_index: (n,) int32 code of each row's document.
        scores: (n,) float64; descending within a query, ties by doc id descending.
    """

    queries: np.ndarray
    docs: np.ndarray
    query_index: np.ndarray
    doc_index: np.ndarray
    scores: np.ndarray

    @classmethod
    def from_codes(
        cls,
        queries: np.ndarray,
        docs: np.ndarray,
        query_index: np.ndarray,
        doc_index: np.ndarray,
        scores: np.ndarray,
        *,
        copy: bool = True,
    ) -> Run:
        """Build from interned columns in any row order (duplicates must be checked first).

        ``copy=False`` hands the arrays over instead of copying them.
        """
        scores = np.asarray(scores, dtype=np.float64)
        if np.isnan(scores).any():
            raise ValidationError("run scores must not be NaN", field="scores")
        order = rank_order(query_index, doc_index, scores, docs)
        if order is not None:
            query_index, doc_index, scores = query_index[order], doc_index[order], scores[order]
            copy = False
        return cls(
            _frozen(queries, copy=copy),
            _frozen(docs, copy=copy),
            _frozen(query_index, np.int32, copy),
            _frozen(doc_index, np.int32, copy),
            _frozen(scores, np.float64, copy),
        )

    @classmethod
    def from_arrays(cls, query_ids: Iterable[str], doc_ids: Iterable[str], scores: Iterable[float]) -> Run:
        """Build from one (query id, doc id, score) per row, in any order.

        Raises:
            ValidationError: unequal lengths, empty or non-string ids, NaN
                scores, or a repeated (query, doc) pair.
        """
        try:
            values = np.fromiter(scores, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValidationError(f"run scores must be numbers: {exc}", field="scores") from None
        queries, docs, query_index, doc_index = _interned(query_ids, doc_ids, values, "run", "scores")
        return cls.from_codes(queries, docs, query_index, doc_index, values, copy=False)

    @classmethod
    def from_dict(cls, run: Mapping[str, Mapping[str, float]]) -> Run:
        """Build from ``{query_id: {doc_id: score}}``."""
        return cls.from_arrays(*_columns(run))

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{query_id: {doc_id: score}}`` (dicts in ranking order)."""
        return _nested(self.queries, self.docs, self.query_index, self.doc_index, self.scores.tolist())

    def __len__(self) -> int:
        return len(self.scores)


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgments, one row per judged (query, document) pair.

    Attributes:
        queries: query ids, first-seen order.
        docs: document ids, first-seen order.
        query_index: (n,) int32 code of each row's query.
        doc_index: (n,) int32 code of each row's document.
        grades: (n,) int64 graded relevance; a grade <= 0 is non-relevant.
    """

    queries: np.ndarray
    docs: np.ndarray
    query_index: np.ndarray
    doc_index: np.ndarray
    grades: np.ndarray

    @classmethod
    def from_codes(
        cls,
        queries: np.ndarray,
        docs: np.ndarray,
        query_index: np.ndarray,
        doc_index: np.ndarray,
        grades: np.ndarray,
        *,
        copy: bool = True,
    ) -> Qrels:
        """Build from interned columns (duplicates must be checked first); see :meth:`Run.from_codes`."""
        return cls(
            _frozen(queries, copy=copy),
            _frozen(docs, copy=copy),
            _frozen(query_index, np.int32, copy),
            _frozen(doc_index, np.int32, copy),
            _frozen(grades, np.int64, copy),
        )

    @classmethod
    def from_arrays(cls, query_ids: Iterable[str], doc_ids: Iterable[str], grades: Iterable[int]) -> Qrels:
        """Build from one (query id, doc id, grade) per row.

        Raises:
            ValidationError: unequal lengths, empty or non-string ids,
                non-integer grades, or a repeated (query, doc) pair.
        """
        values = list(grades)
        bad = [g for g in values if isinstance(g, bool) or not isinstance(g, (int, np.integer))]
        if bad:
            raise ValidationError(f"grades must be integers, got {bad[0]!r}", field="qrels")
        queries, docs, query_index, doc_index = _interned(query_ids, doc_ids, values, "qrels", "grades")
        return cls.from_codes(queries, docs, query_index, doc_index, np.array(values, dtype=np.int64), copy=False)

    @classmethod
    def from_dict(cls, qrels: Mapping[str, Mapping[str, int]]) -> Qrels:
        """Build from ``{query_id: {doc_id: grade}}``."""
        return cls.from_arrays(*_columns(qrels))

    def to_dict(self) -> dict[str, dict[str, int]]:
        """``{query_id: {doc_id: grade}}``."""
        return _nested(self.queries, self.docs, self.query_index, self.doc_index, self.grades.tolist())

    def __len__(self) -> int:
        return len(self.grades)
