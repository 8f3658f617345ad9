"""Reading the gate file's values: the error that says which table and key it concerns, and typed reads."""

from __future__ import annotations

from functools import partial
from typing import Any

from searchtrace.typedreads import NUMBER, read

__all__ = ["Invalid", "fraction", "number"]


class Invalid(ValueError):
    """A semantic error, with the table and key it concerns (to find its line)."""

    def __init__(self, message: str, table: str | None = None, key: str | None = None) -> None:
        super().__init__(message)
        self.table, self.key = table, key


def number(value: Any, what: str, table: str | None = None) -> float:
    """``value`` as a float; an :class:`Invalid` for anything but a finite number."""
    return read(value, _FINITE, what, partial(_invalid, table=table))


def fraction(value: Any, what: str, table: str | None = None) -> float:
    """``value`` as a float in [0, 1]."""
    return read(value, _FRACTION, what, partial(_invalid, table=table))


def _invalid(what: str, expected: str, got: object, table: str | None) -> Invalid:
    return Invalid(f"{what} must be {expected}, got {got!r}", table, what)


_FINITE = NUMBER.saying("a finite number")
_FRACTION = _FINITE.such_that(lambda v: 0 <= v <= 1, "in [0, 1]")
