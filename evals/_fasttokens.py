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

CHUNK_BYTES = 1 << 21
"""Bytes per chunk (ends moved to the next newline)."""
_SEPARATOR = 0x20
"""Once control characters are refused, the bytes up to this one are the separators (space, tab, newline)."""


def _line_bounds(raw: np.ndarray, width: int) -> np.ndarray | None:
    """(lines, width + 1) offsets into ``raw``: each line's start, then the end of each field.

    ``raw`` ends with a newline. None when two separators touch or one starts
    ``raw`` (an empty field or line, a space at a line's edge), or when a line
    has more or fewer than ``width`` fields: every ``width``-th separator must be a
    newline and no other one.
    """
    seps = np.flatnonzero(raw <= _SEPARATOR)
    if not len(seps) or len(seps) % width or seps[0] == 0 or (np.diff(seps) == 1).any():
        return None
    rows = seps.reshape(-1, width)
    newline = raw[rows] == 0x0A
    if not newline[:, -1].all() or newline[:, :-1].any():
        return None
    bounds = np.empty((len(rows), width + 1), dtype=np.int64)
    bounds[0, 0] = 0
    bounds[1:, 0] = rows[:-1, -1] + 1
    bounds[:, 1:] = rows
    return bounds


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
        bounds = _line_bounds(raw[begin:end], width)
        if bounds is None:
            return None
        for (starts, ends), column in zip(parts, columns):
            starts.append(bounds[:, column] + (begin + (column > 0)))
            ends.append(bounds[:, column + 1] + begin)
        begin = end
    if not parts or not parts[0][0]:
        return None
    return [(np.concatenate(starts), np.concatenate(ends)) for starts, ends in parts]
