"""Parse a column of numbers given as byte ranges of a file, a column of digits at a time.

The plain forms (``[+-]digits[.digits]`` for scores, ``[+-]digits`` for grades)
are read with integer arithmetic: a score is its digits as an integer, exact
below 2**53, divided by an exact power of ten, one correctly rounded division,
so it is the same float64 that Python's ``float`` gives. Any other field
(an exponent, more digits, ``inf``, ...) goes through ``float`` or ``int``
itself; None when one of them refuses a field or a score is NaN, for the
exact reader to name the line.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from searchtrace.evals.scoring.interning import decode, fixed_width

__all__ = ["parse_floats", "parse_ints"]

_EXACT = 2**53
"""Integers up to this are exact in a float64."""
_MAX_DIGITS = 18
"""Digits an int64 holds whatever they are."""
_POWERS = 10.0 ** np.arange(23)
"""The powers of ten a float64 holds exactly."""


class _Digits:
    """Sign, digits and decimal point of each field held by ``fixed_width`` words, a column of bytes at a time."""

    def __init__(self, words: np.ndarray, length: np.ndarray) -> None:
        self.words = words
        rows = words.view(np.uint8).reshape(len(words), -1)[:, : int(length.max())]
        n = len(rows)
        columns = np.ascontiguousarray(rows.T)  # column by column, each one contiguous
        self.negative = columns[0] == ord("-")
        signed = self.negative | (columns[0] == ord("+"))
        self.mantissa = np.zeros(n, dtype=np.int64)  # wraps past 18 digits: such a row is not plain
        self.digits = np.zeros(n, dtype=np.int32)
        self.points = np.zeros(n, dtype=np.int32)
        point_end = np.zeros(n, dtype=np.int32)
        for j, byte in enumerate(columns):  # bytes past a field are 0: neither digit nor point
            digit = byte - np.uint8(ord("0"))
            is_digit = digit < 10
            is_point = byte == ord(".")
            self.digits += is_digit
            self.points += is_point
            np.maximum(point_end, is_point * np.int32(j + 1), out=point_end)
            self.mantissa *= 1 + 9 * is_digit.view(np.uint8)
            self.mantissa += digit * is_digit
        self.fraction = np.where(self.points > 0, length - point_end, 0)
        self.only_these = length == self.digits + self.points + signed

    @classmethod
    def of(cls, raw: np.ndarray, start: np.ndarray, end: np.ndarray) -> _Digits | None:
        """The digits of the fields ``raw[start:end]``."""
        words = fixed_width(raw, start, end)
        return None if words is None else cls(words, end - start)

    def plain(self, points: int) -> np.ndarray:
        """Rows of only a sign, 1 to 18 digits and at most ``points`` decimal points."""
        return self.only_these & (self.points <= points) & (self.digits > 0) & (self.digits <= _MAX_DIGITS)


def _others(words: np.ndarray, parse: Callable[[str | bytes], float | int]) -> list[float | int] | None:
    """``parse`` of each field held by ``words`` (rows of ``fixed_width``); None when it refuses one.

    ASCII fields go to ``parse`` as bytes (``float`` and ``int`` read them as the
    same text), others decoded first, as the line reader does.
    """
    if (words.view(np.uint8) < 0x80).all():
        fields: list[str] | list[bytes] | None = words.view(f"S{8 * words.shape[1]}").ravel().tolist()
    else:
        fields = decode(words)
    try:
        return None if fields is None else list(map(parse, fields))
    except ValueError:
        return None


def parse_floats(raw: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray | None:
    """float64 of each field, as ``float`` reads it; None if one is not a number or is NaN."""
    d = _Digits.of(raw, start, end)
    if d is None:
        return None
    fast = d.plain(1) & (d.mantissa <= _EXACT)
    values = d.mantissa.astype(np.float64)
    values /= _POWERS[np.minimum(d.fraction, len(_POWERS) - 1)]  # fraction <= 18 on fast rows
    np.negative(values, out=values, where=d.negative)
    rest = np.flatnonzero(~fast)
    if len(rest):
        parsed = _others(d.words[rest], float)
        if parsed is None:
            return None
        values[rest] = parsed
        if np.isnan(values[rest]).any():
            return None
    return values


def parse_ints(raw: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray | None:
    """int64 of each field, as ``int`` reads it; None if one is not an integer or outside int64."""
    d = _Digits.of(raw, start, end)
    if d is None:
        return None
    values = np.where(d.negative, -d.mantissa, d.mantissa)
    rest = np.flatnonzero(~d.plain(0))
    if len(rest):
        parsed = _others(d.words[rest], int)
        if parsed is None:
            return None
        try:
            values[rest] = parsed
        except OverflowError:
            return None
    return values
