"""The column reader: whitespace-separated columns of a large file, by numpy over its bytes.

Only answers for well-formed input: any anomaly (wrong column count, a value
that does not convert, a comment line, a control character, an id that is not
UTF-8, a line or an id past its limit in :mod:`searchtrace.limits`) returns None and the caller re-reads the file with the exact
line-by-line parser, which names the offending line: one validation path
whichever reader runs. Nothing here builds a Python object per row: fields are
found from the separators' offsets (:mod:`evals.trec.tokens`), ids interned
through fixed-width byte keys (:mod:`evals.interning`), numbers parsed by
columns of digits (:mod:`evals.trec.numbers`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from searchtrace.evals.runs.trec.numbers import parse_floats, parse_ints
from searchtrace.evals.runs.trec.tokens import field_bounds
from searchtrace.evals.scoring.interning import intern_fields
from searchtrace.limits import MAX_ID_BYTES, MAX_TREC_LINE_BYTES

__all__ = ["ENABLED", "Columns", "parse_columns", "parse_tsv"]

ENABLED = True
"""False sends every file to the exact line reader (the tests compare the two paths)."""

_TO_SPACE = bytes.maketrans(b"\t\r\x0b\x0c", b"    ")
_SPACES = re.compile(rb" {2,}")
_LINE_EDGES = re.compile(rb" ?\n[ \n]*")
# The control characters the line reader rejects in an id; with \t \r \v \f and #, what ``_odd_bytes`` keeps.
_CONTROL = bytes([*range(0x00, 0x09), *range(0x0E, 0x20), 0x7F])
_OTHER_WHITESPACE = frozenset(b"\t\r\x0b\x0c")
_NOT_ODD = bytes(sorted(set(range(256)) - set(_CONTROL) - _OTHER_WHITESPACE - {ord("#")}))


class Columns(NamedTuple):
    """Interned id columns and one numeric column of a parsed file."""

    queries: np.ndarray
    query_index: np.ndarray
    docs: np.ndarray
    doc_index: np.ndarray
    values: np.ndarray


def _odd_bytes(data: bytes) -> set[int]:
    """Which control, non-space whitespace and ``#`` bytes ``data`` has (one pass deleting all others)."""
    return set(data.translate(None, _NOT_ODD))


def _refused(data: bytes, odd: set[int]) -> bool:
    """A control character, or a comment line (``#`` first on a line: ``data`` has no leading spaces)."""
    if not odd.isdisjoint(_CONTROL):
        return True
    return ord("#") in odd and (data.startswith(b"#") or b"\n#" in data)


def _normalize(data: bytes) -> bytes:
    """One space between fields, one newline after each line: no blank lines, no spaces at line edges."""
    data = data.translate(_TO_SPACE)
    data = _SPACES.sub(b" ", data)
    return _LINE_EDGES.sub(b"\n", data).strip(b" \n") + b"\n"


def _longest_line(data: bytes) -> int:
    """The longest line of ``data``, its newline aside, as the line reader counts it (one pass over the bytes)."""
    newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 0x0A)
    ends = np.append(newlines, len(data))
    return int((ends - np.append(-1, newlines) - 1).max())


def _tokens(data: bytes, width: int, columns: Sequence[int], normalize: bool, original: bytes | None
            ) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]] | None:
    """The bytes and the fields' offsets of ``columns``; with ``normalize``, uneven spacing is evened when found.

    None too when a line or an id is past its limit: the line reader names it.
    ``columns[:2]`` are the ids, the first one each line's first field. Lines are
    measured from its offsets when ``data`` is as the file has it, else on the
    file's bytes (``original``, when the caller evened them, or ``data`` before
    evening here).
    """
    before = data if original is None else original
    data = data if data.endswith(b"\n") else data + b"\n"
    bounds = field_bounds(data, width, columns)
    evened = original is not None
    if bounds is None and normalize:
        evened = True
        data = _normalize(data)
        bounds = field_bounds(data, width, columns)
    if bounds is None or any(int((end - start).max()) > MAX_ID_BYTES for start, end in bounds[:2]):
        return None
    if evened or columns[0] != 0:
        longest = _longest_line(before)
    else:
        starts = bounds[0][0]
        longest = int((np.append(starts[1:], len(data)) - starts).max()) - 1
    return None if longest > MAX_TREC_LINE_BYTES else (np.frombuffer(data, dtype=np.uint8), bounds)


def _columns(data: bytes, width: int, id_columns: tuple[int, int], value_column: int, kind: str,
             normalize: bool, original: bytes | None = None) -> Columns | None:
    """The columns of ``data``; ``original`` is the file's bytes when ``data`` was evened from them."""
    tokens = _tokens(data, width, (*id_columns, value_column), normalize, original)
    if tokens is None:
        return None
    raw, (query_fields, doc_fields, value_fields) = tokens
    queries = intern_fields(raw, *query_fields)
    docs = intern_fields(raw, *doc_fields)
    if queries is None or docs is None:
        return None
    values = (parse_floats if kind == "float" else parse_ints)(raw, *value_fields)
    if values is None:
        return None
    return Columns(queries[0], queries[1], docs[0], docs[1], values)


def parse_columns(data: bytes, width: int, id_columns: tuple[int, int], value_column: int, kind: str) -> Columns | None:
    """Parse ``width`` whitespace-separated columns; keep two id columns and a value column.

    Args:
        data: the file's bytes.
        width: fields per line.
        id_columns: positions of the query and document ids.
        value_column: position of the score (``kind="float"``) or grade (``"int"``).
        kind: "float" or "int".

    Returns:
        The columns, or None when the fast path cannot vouch for the input.
    """
    if not ENABLED:
        return None
    odd = _odd_bytes(data)
    if _refused(data, odd):
        return None
    if not odd.isdisjoint(_OTHER_WHITESPACE):
        return _columns(_normalize(data), width, id_columns, value_column, kind, normalize=True, original=data)
    return _columns(data, width, id_columns, value_column, kind, normalize=True)


def parse_tsv(data: bytes, id_columns: tuple[int, int], value_column: int) -> Columns | None:
    """Parse 3 tab-separated columns with an integer value (BEIR qrels, header removed).

    Returns None when a field may carry whitespace to strip, or a line is blank.
    """
    if not ENABLED or _refused(data, odd := _odd_bytes(data)) or b" " in data:
        return None
    original = None
    if ord("\r") in odd:
        data, original = data.replace(b"\r\n", b"\n"), data
    if any(c in data for c in (b"\r", b"\x0b", b"\x0c")):
        return None
    return _columns(data, 3, id_columns, value_column, "int", normalize=False, original=original)
