"""Typed reads of untrusted values: each kind of value checked once, each caller's own error.

A value from outside (an environment variable, the gate's TOML file, a run folder's JSON, a
search request, a response another retriever wrote) is read with :func:`read`: checked against
a :class:`Kind` (what it must be, with the words a message uses for it) and returned typed, or
refused with the caller's own error. The kinds are written here once; the wording and the error
class stay the caller's: its :data:`Refuse` turns where the value came from (a variable's name,
a field's path, a gate key), what was expected and what was got into its exception, e.g.::

    def refuse(where: str, expected: str, got: object) -> ValidationError:
        return ValidationError(f"{where}: expected {expected}, got {got!r}", field=where)

    score = read(hit.get("score"), NUMBER, "results[0].score", refuse)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

__all__ = ["FLAG", "INTEGER", "LIST", "NUMBER", "OBJECT", "REAL", "STRING", "STRINGS", "Kind", "Refuse", "read"]

T = TypeVar("T")

Refuse = Callable[[str, str, object], Exception]
"""``(where, expected, got) -> the caller's error``: where the value came from, the words for
what it must be (``"a string"``, ``"in [0, 1]"``) and the value itself, to word as the caller does."""


class Kind(Generic[T]):
    """What a value must be: the words for it, the test, and the conversion to the typed value.

    Args:
        expected: the words a message uses, e.g. ``"a string"`` (to follow "must be" or "expected").
        accepts: True for a value of this kind.
        convert: the typed value from an accepted one (None: the value itself).
        wider: a kind the value must be first; its refusal is reported with its own words, so
            ``NUMBER.such_that(...)`` refuses ``"x"`` as "a number" and ``2`` as the narrower words.
    """

    __slots__ = ("accepts", "convert", "expected", "wider")

    def __init__(self, expected: str, accepts: Callable[[Any], bool], convert: Callable[[Any], T] | None = None,
                 wider: Kind[Any] | None = None) -> None:
        self.expected, self.accepts, self.convert, self.wider = expected, accepts, convert, wider

    def typed(self, value: Any) -> T:
        """An accepted value, converted."""
        return value if self.convert is None else self.convert(value)

    def refused(self, value: object) -> str | None:
        """The words for what ``value`` should have been, or None when it is of this kind."""
        if self.wider is not None:
            wrong = self.wider.refused(value)
            if wrong is not None:
                return wrong
        return None if self.accepts(value) else self.expected

    def such_that(self, test: Callable[[Any], bool], expected: str) -> Kind[T]:
        """This kind narrowed by ``test`` (a range, non-empty), refused as ``expected`` when only the test fails."""
        return Kind(expected, test, self.convert, wider=self)

    def saying(self, expected: str) -> Kind[T]:
        """The same kind, worded ``expected`` (``"a finite number"`` where a caller says so)."""
        return Kind(expected, self.accepts, self.convert, self.wider)

    def or_null(self) -> Kind[T | None]:
        """This kind, or None (JSON's null); worded ``"<expected> or null"``."""
        return Kind(f"{self.expected} or null", lambda v: v is None or self.refused(v) is None,
                    lambda v: None if v is None else self.typed(v))

    def __repr__(self) -> str:
        return f"Kind({self.expected!r})"


def read(value: object, kind: Kind[T], where: str, refuse: Refuse) -> T:
    """``value`` as ``kind``, typed.

    Raises:
        Exception: ``refuse(where, expected, value)``, the caller's own error, when it is not of the kind.
    """
    if kind.wider is None and kind.accepts(value):  # the usual case, in one test
        return kind.typed(value)
    wrong = kind.refused(value)
    if wrong is not None:
        raise refuse(where, wrong, value)
    return kind.typed(value)


def _is_real(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


STRING: Kind[str] = Kind("a string", lambda v: isinstance(v, str))
"""A string."""
INTEGER: Kind[int] = Kind("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool), int)
"""An integer (``True`` is not one; ``5.0`` is not one either: a caller that allows it converts first)."""
REAL: Kind[float] = Kind("a number", _is_real)
"""An int or float as given, NaN and the infinities included: for a caller whose own bounds decide."""
NUMBER: Kind[float] = Kind("a number", lambda v: _is_real(v) and math.isfinite(v), float)
"""A finite number, as a float."""
FLAG: Kind[bool] = Kind("true or false", lambda v: isinstance(v, bool))
"""A boolean (``0`` and ``1`` are not)."""
LIST: Kind[list[Any]] = Kind("a list", lambda v: isinstance(v, list))
"""A list (JSON's array), as it is."""
OBJECT: Kind[Mapping[str, Any]] = Kind("an object", lambda v: isinstance(v, Mapping))
"""A mapping (JSON's object), as it is."""
STRINGS: Kind[tuple[str, ...]] = Kind("a list of strings",
                                      lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), tuple)
"""A list of strings, as a tuple."""
