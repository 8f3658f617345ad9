"""Fast path for whitespace-separated columns: pyarrow's CSV reader.

Only answers for well-formed input: any anomaly (wrong column count, a value
that does not convert, an empty field, a comment line, a control character)
returns None and the caller re-reads the file with the exact line-by-line
parser, which names the offending line: one validation path whichever reader
runs. Without pyarrow every call returns None.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

__all__ = ["ENABLED", "Columns", "index_in", "numbers", "parse_columns", "parse_tsv", "strings"]

ENABLED = True
"""False sends every file to the exact line reader (the tests compare the two paths)."""

_TO_SPACE = bytes.maketrans(b"\t\r\x0b\x0c", b"    ")
_SPACES = re.compile(rb" {2,}")
_LINE_EDGES = re.compile(rb" ?\n ?")
_OTHER_SPACE = (b"\t", b"\x0b", b"\x0c")
# The control characters the line reader rejects in an id; with \t \r \v \f and #, what ``_odd_bytes`` keeps.
_CONTROL = bytes([*range(0x00, 0x09), *range(0x0E, 0x20), 0x7F])
_OTHER_WHITESPACE = frozenset(b"\t\r\x0b\x0c")
_NOT_ODD = bytes(sorted(set(range(256)) - set(_CONTROL) - _OTHER_WHITESPACE - {ord("#")}))


def _odd_bytes(data: bytes) -> set[int]:
    """Which control, non-space whitespace and ``#`` bytes ``data`` has (one pass deleting all others)."""
    return set(data.translate(None, _NOT_ODD))


def _refused(data: bytes, odd: set[int]) -> bool:
    """A control character, or a comment line (``#`` first on a line: ``data`` has no leading spaces)."""
    if not odd.isdisjoint(_CONTROL):
        return True
    return ord("#") in odd and (data.startswith(b"#") or b"\n#" in data)


def _uneven_spaces(data: bytes) -> bool:
    """Whether a space doubles another or touches a line's start or end (three vectorised passes)."""
    if data.startswith(b" ") or data.endswith(b" "):
        return True
    raw = np.frombuffer(data, dtype=np.uint8)
    space, newline = raw == 0x20, raw == 0x0A
    return bool((space[1:] & (space[:-1] | newline[:-1])).any() or (newline[1:] & space[:-1]).any())


class Columns(NamedTuple):
    """Interned id columns and one numeric column of a parsed file."""

    queries: np.ndarray
    query_index: np.ndarray
    docs: np.ndarray
    doc_index: np.ndarray
    values: np.ndarray


def _normalize(data: bytes) -> bytes:
    """Collapse every run of ASCII whitespace inside a line to one space."""
    data = data.translate(_TO_SPACE)
    data = _SPACES.sub(b" ", data)
    return _LINE_EDGES.sub(b"\n", data).strip(b" ")


def _read(data: bytes, names: list[str], delimiter: str, ids: tuple[str, str], value: tuple[str, object]
          ) -> pa.Table | None:
    types = {ids[0]: pa.string(), ids[1]: pa.string(), value[0]: value[1]}
    try:
        return pcsv.read_csv(
            pa.BufferReader(data),
            read_options=pcsv.ReadOptions(column_names=names),
            parse_options=pcsv.ParseOptions(
                delimiter=delimiter, quote_char=False, double_quote=False, escape_char=False
            ),
            convert_options=pcsv.ConvertOptions(
                column_types=types,
                include_columns=[ids[0], ids[1], value[0]],
                null_values=[],
                strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None


# pyarrow's ``pa.array`` and ``to_numpy`` import pandas (most of a second of CPU) even for ints and
# numpy input; arrays cross between numpy and arrow through their buffers instead.


def numbers(array: pa.Array) -> np.ndarray:
    """A primitive arrow array without nulls as a (read-only) numpy array over its buffer."""
    dtype = np.dtype(array.type.to_pandas_dtype())
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize)


def strings(values: Sequence[str]) -> pa.Array:
    """An arrow string array of ``values`` (``large_string`` past 2 GiB of text)."""
    blob = "".join(values).encode()
    lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    if len(blob) != lengths.sum():  # not all ASCII: characters are not bytes
        encoded = [v.encode() for v in values]
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(values))
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    small = offsets[-1] < 2**31
    return pa.Array.from_buffers(pa.string() if small else pa.large_string(), len(values),
                                 [None, pa.py_buffer(offsets.astype(np.int32) if small else offsets),
                                  pa.py_buffer(blob)])


def index_in(values: np.ndarray, vocab: np.ndarray) -> np.ndarray:
    """Index of each of ``values`` (strings) in ``vocab``, -1 where absent: arrow's hash join."""
    found = pc.index_in(strings(values.tolist()), value_set=strings(vocab.tolist()))
    index = numbers(found).astype(np.int64)
    if found.null_count:  # absent: null in arrow (fill_null would import pandas too)
        bits = np.unpackbits(np.frombuffer(found.buffers()[0], dtype=np.uint8), bitorder="little")
        index[bits[found.offset:found.offset + len(found)] == 0] = -1
    return index


def _encode(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray] | None:
    """Vocabulary (object array, first-seen order) and int32 codes; None if an id is empty."""
    encoded = pc.dictionary_encode(column.combine_chunks())
    vocab = encoded.dictionary
    if _empty(vocab):
        return None
    codes = numbers(encoded.indices).astype(np.int32, copy=False)
    names = np.empty(len(vocab), dtype=object)
    names[:] = vocab.to_pylist()
    return names, codes


def _empty(vocab: pa.Array) -> bool:
    """Whether a string array has an empty string."""
    return len(vocab) > 0 and pc.min(pc.binary_length(vocab)).as_py() == 0


def _columns(table: pa.Table, ids: tuple[str, str], value: str) -> Columns | None:
    queries = _encode(table.column(ids[0]))
    docs = _encode(table.column(ids[1]))
    if queries is None or docs is None:
        return None
    values = numbers(table.column(value).combine_chunks())
    if values.dtype.kind == "f" and np.isnan(values).any():
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
    names = [f"c{i}" for i in range(width)]
    ids = (names[id_columns[0]], names[id_columns[1]])
    value = (names[value_column], pa.float64() if kind == "float" else pa.int64())
    odd = _odd_bytes(data)
    if not odd.isdisjoint(_CONTROL):
        return None
    # Fields split on single spaces are all non-empty (as the line reader's are) only once other
    # whitespace, doubled spaces and spaces at line ends are made single spaces between fields.
    if not odd.isdisjoint(_OTHER_WHITESPACE) or _uneven_spaces(data):
        data = _normalize(data)
    table = None if _refused(data, odd) else _read(data, names, " ", ids, value)
    if table is None or table.num_rows == 0:
        return None
    return _columns(table, ids, value[0])


def parse_tsv(data: bytes, id_columns: tuple[int, int], value_column: int) -> Columns | None:
    """Parse 3 tab-separated columns with an integer value (BEIR qrels, header removed).

    Returns None when a field may carry whitespace to strip.
    """
    if not ENABLED or _refused(data, _odd_bytes(data)):
        return None
    if any(c in data for c in (b" ", *_OTHER_SPACE[1:])):
        return None
    names = ["c0", "c1", "c2"]
    ids = (names[id_columns[0]], names[id_columns[1]])
    table = _read(data, names, "\t", ids, (names[value_column], pa.int64()))
    if table is None or table.num_rows == 0:
        return None
    return _columns(table, ids, names[value_column])
