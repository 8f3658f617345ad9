"""Typed readers of environment variables: one parse and one error for every package.

The names live in :mod:`searchtrace.environment`; a configuration object reads
its variables through these readers while it resolves, as
``pick(argument, integer(environ, SEARCHTRACE_MAX_CANDIDATES), 100)``.

A blank value (empty, or spaces only) is unset: the reader returns ``None`` and
the caller's default applies. A value that cannot be read raises
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
    value = _stripped(environ, name)
    if value is None:
        return None
    if value.lower() in _TRUE + _FALSE:
        return value.lower() in _TRUE
    raise _bad(name, value, f"one of {', '.join(_TRUE + _FALSE)}")


def integer(environ: Mapping[str, str], name: str, *, minimum: int = 0) -> int | None:
    """A whole number >= ``minimum`` (decimal digits, optionally signed), or None when unset."""
    value = _stripped(environ, name)
    if value is None:
        return None
    if not _WHOLE.fullmatch(value) or int(value) < minimum:
        raise _bad(name, value, f"a whole number >= {minimum}")
    return int(value)


def number(environ: Mapping[str, str], name: str, *, minimum: float | None = None) -> float | None:
    """A finite number (``2``, ``0.5``, ``1e-3``) >= ``minimum`` when one is given, or None when unset."""
    value = _stripped(environ, name)
    if value is None:
        return None
    try:
        parsed = float(value)
    except ValueError:
        parsed = math.nan
    if not math.isfinite(parsed) or (minimum is not None and parsed < minimum):
        raise _bad(name, value, "a number" if minimum is None else f"a number >= {minimum:g}")
    return parsed


def choice(environ: Mapping[str, str], name: str, kind: type[E]) -> E | None:
    """The member of the enumeration ``kind`` whose value the variable names (any case), or None when unset."""
    value = _stripped(environ, name)
    if value is None:
        return None
    for member in kind:
        if str(member.value).lower() == value.lower():
            return member
    raise _bad(name, value, f"one of {', '.join(str(m.value) for m in kind)}")


def pick(explicit: T | None, from_env: T | None, default: T) -> T:
    """Explicit argument > environment variable > default: the first of them that is not None."""
    return explicit if explicit is not None else from_env if from_env is not None else default


def _stripped(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(name, "").strip()
    return value or None


def _bad(name: str, value: str, allowed: str) -> ConfigError:
    return ConfigError(f"{name} must be {allowed}, got {value!r}", field=name)
