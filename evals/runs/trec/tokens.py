"""Split evenly spaced lines of fields into the offsets of the columns asked for.

The data is taken in chunks of whole lines, a few megabytes each, so that the
separators' offsets of a 30 MB file never sit in memory at once: arrays that
size are fresh pages from the kernel on every call, which costs more than the
arithmetic on them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["CHUNK_BYTES", "field_bounds"]

CHUNK_BYTES = 1 << 18
"""Bytes per chunk (ends moved to the next newline)."""
_SEPARATOR = 0x20
"""Once control characters are refused, the bytes up to this one are the separators (space, tab, newline)."""


def _separators(raw: np.ndarray, width: int) -> np.ndarray | None:
    """(lines, width) offsets into ``raw`` of each line's separators, its newline last.

    ``raw`` ends with a newline. None when two separators touch or one starts
    ``raw`` (an empty field or line, a space at a line's edge), or when a line
    has more or fewer than ``width`` fields: there must be ``width`` separators a
    line, and each line's last must be one of its newlines.
    """
    is_separator = raw <= _SEPARATOR
    if is_separator[0] or (is_separator[1:] & is_separator[:-1]).any():
        return None
    seps = np.flatnonzero(is_separator)
    lines = np.count_nonzero(raw == 0x0A)
    if len(seps) != lines * width:
        return None
    rows = seps.reshape(lines, width)
    return rows if (raw[rows[:, -1]] == 0x0A).all() else None


def field_bounds(data: bytes, width: int, columns: Sequence[int]) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """Start and end offsets of the fields of each of ``columns``, in line order.

    Args:
        data: lines of ``width`` fields, one separator (space or tab) between
            fields, each line ending with a newline (the last one too).
        width: fields per line.
        columns: positions of the fields wanted.

    Returns:
        One (start, end) pair of int64 arrays per column, or None when a line
        is empty, unevenly spaced or has another number of fields.
    """
    raw = np.frombuffer(data, dtype=np.uint8)
    parts: list[tuple[list[np.ndarray], list[np.ndarray]]] = [([], []) for _ in columns]
    begin = 0
    while begin < len(data):
        end = data.find(b"\n", begin + CHUNK_BYTES) + 1 or len(data)
        rows = _separators(raw[begin:end], width)
        if rows is None:
            return None
        for (starts, ends), column in zip(parts, columns):
            if column:
                starts.append(rows[:, column - 1] + (begin + 1))
            else:
                starts.append(np.concatenate([[begin], rows[:-1, -1] + (begin + 1)]))
            ends.append(rows[:, column] + begin)
        begin = end
    if not parts or not parts[0][0]:
        return None
    return [(np.concatenate(starts), np.concatenate(ends)) for starts, ends in parts]
