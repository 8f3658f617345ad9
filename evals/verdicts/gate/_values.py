"""Reading the gate file's values: the error that says which table and key it concerns, and typed reads."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["Invalid", "fraction", "number"]


class Invalid(ValueError):
    """A semantic error, with the table and key it concerns (to find its line)."""

    def __init__(self, message: str, table: str | None = None, key: str | None = None) -> None:
        super().__init__(message)
        self.table, self.key = table, key


def number(value: Any, what: str, table: str | None = None) -> float:
    """``value`` as a float; an :class:`Invalid` for anything but a finite number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise Invalid(f"{what} must be a finite number, got {value!r}", table, what)
    return float(value)


def fraction(value: Any, what: str, table: str | None = None) -> float:
    """``value`` as a float in [0, 1]."""
    out = number(value, what, table)
    if not 0 <= out <= 1:
        raise Invalid(f"{what} must be in [0, 1], got {value!r}", table, what)
    return out
