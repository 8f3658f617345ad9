"""Typed readers of environment variables: one parse and one error for every package.

The names live in :mod:`searchtrace.environment`; a configuration object reads
its variables through these readers while it resolves, as
``pick(argument, integer(environ, SEARCHTRACE_MAX_CANDIDATES), 100)``.

Each reader reads text as a :class:`~searchtrace.typedreads.Kind`, with
:func:`~searchtrace.typedreads.read`. A blank value (empty, or spaces only) is
unset: the reader returns ``None`` and the caller's default applies. A value that cannot be read raises
:class:`~searchtrace.errors.ConfigError` naming the variable, the value and
what is allowed, e.g. ``SEARCHTRACE_MAX_CANDIDATES must be a whole number >= 0,
got '-3'``.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Mapping
from typing import TypeVar

from searchtrace.errors import ConfigError
from searchtrace.typedreads import Kind, read

__all__ = ["choice", "flag", "integer", "number", "pick", "text"]

_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")
_WHOLE = re.compile(r"[+-]?[0-9]+")
T = TypeVar("T")
E = TypeVar("E", bound=enum.Enum)


def text(environ: Mapping[str, str], name: str) -> str | None:
    """The variable's value as it is set, or None when it is unset or blank."""
    value = environ.get(name)
    return value if value and value.strip() else None


def flag(environ: Mapping[str, str], name: str) -> bool | None:
    """``1``/``true``/``yes``/``on`` -> True, ``0``/``false``/``no``/``off`` -> False (any case), unset -> None."""
    return _read(environ, name, _FLAG)


def integer(environ: Mapping[str, str], name: str, *, minimum: int = 0) -> int | None:
    """A whole number >= ``minimum`` (decimal digits, optionally signed), or None when unset."""
    return _read(environ, name, Kind(f"a whole number >= {minimum}",
                                     lambda v: bool(_WHOLE.fullmatch(v)) and int(v) >= minimum, int))


def number(environ: Mapping[str, str], name: str, *, minimum: float | None = None) -> float | None:
    """A finite number (``2``, ``0.5``, ``1e-3``) >= ``minimum`` when one is given, or None when unset."""
    allowed = "a number" if minimum is None else f"a number >= {minimum:g}"
    return _read(environ, name, Kind(allowed, lambda v: math.isfinite(_float(v))
                                     and (minimum is None or _float(v) >= minimum), _float))


def choice(environ: Mapping[str, str], name: str, kind: type[E]) -> E | None:
    """The member of the enumeration ``kind`` whose value the variable names (any case), or None when unset."""
    members = {str(m.value).lower(): m for m in reversed(kind)}  # reversed: the first member wins a tie
    return _read(environ, name, Kind(f"one of {', '.join(str(m.value) for m in kind)}",
                                     lambda v: v.lower() in members, lambda v: members[v.lower()]))


def pick(explicit: T | None, from_env: T | None, default: T) -> T:
    """Explicit argument > environment variable > default: the first of them that is not None."""
    return explicit if explicit is not None else from_env if from_env is not None else default


def _read(environ: Mapping[str, str], name: str, kind: Kind[T]) -> T | None:
    value = environ.get(name, "").strip()
    return read(value, kind, name, _bad) if value else None


def _float(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        return math.nan


def _bad(name: str, allowed: str, value: object) -> ConfigError:
    return ConfigError(f"{name} must be {allowed}, got {value!r}", field=name)


_FLAG = Kind(f"one of {', '.join(_TRUE + _FALSE)}", lambda v: v.lower() in _TRUE + _FALSE, lambda v: v.lower() in _TRUE)
