"""What every transport shares: headers from the environment, the eval's ``traceparent``, and errors by kind.

The error seam the eval's client discipline reads (retry or not, and how long
to wait): 429 and 503 are :class:`Overloaded` with the ``Retry-After`` the
service asked for (seconds or an HTTP date); a timeout is :class:`SearchTimeout`;
no connection is :class:`BackendUnavailable`; anything else the service got
wrong (a 500, JSON that is not JSON, a tool error) is :class:`SearchFailed`.
A header's value never appears in a message: only its name and its variable.
An answer's JSON is decoded by :func:`json_of`: orjson where it reads what the
standard library reads, else the standard library.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from email.utils import parsedate_to_datetime
from typing import Any

import orjson
from opentelemetry import propagate

from searchtrace.errors import ConfigError, Overloaded, SearchFailed, SearchtraceError
from searchtrace.evals.runs.targets.config import Header

__all__ = ["header_values", "json_of", "retry_after_s", "status_error", "trace_carrier"]

_OVERLOADED = (429, 503)


def header_values(headers: Sequence[Header], origin: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Each header's value from its environment variable. Raises ConfigError naming the header and variable (only)."""
    env = os.environ if environ is None else environ
    out = {}
    for h in headers:
        value = env.get(h.env)
        if not value:
            raise ConfigError(f"{origin}: [headers] {h.name} reads ${h.env}, which is not set", field=h.env)
        out[h.name] = h.prefix + value
    return out


def trace_carrier() -> dict[str, str]:
    """The current span's W3C ``traceparent`` (and ``tracestate``), for an HTTP header or an MCP ``_meta``."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


def retry_after_s(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds to wait: a number of seconds, or an HTTP date (in the past: 0); None if absent
    or unreadable."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def status_error(origin: str, status: int, headers: Mapping[str, str], body: Any = None) -> SearchtraceError:
    """The error an HTTP error status stands for (the body's error object, when it carries ours, is read first)."""
    from searchtrace.errors import error_from_object

    ours = error_from_object(body)
    if status in _OVERLOADED:
        wait = retry_after_s(headers.get("retry-after"))
        said = f", Retry-After {wait:g} s" if wait is not None else ""
        return Overloaded(f"{origin}: HTTP {status} (overloaded{said})", retry_after_s=wait)
    if ours is not None:
        ours.message = f"{origin}: HTTP {status}: {ours.message}"
        return ours
    return SearchFailed(f"{origin}: HTTP {status}")


_DIGITS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
"""Each digit as ``0``, any other byte a space (:func:`may_hold_long_integer`'s scan)."""
_LONG_RUN = b"0" * 19
"""Nineteen digits in a row: an integer literal past 64 bits has them, one orjson would read as a float."""


def may_hold_long_integer(content: bytes) -> bool:
    """Whether a JSON text has a run of 19 digits: perhaps an integer beyond 64 bits, which orjson reads as a
    float (in a string, as a rule: an id, a timestamp in nanoseconds)."""
    return _LONG_RUN in content.translate(_DIGITS)


def json_of(reply: Any) -> Any:
    """``reply.json()``, read by orjson where it reads the same: a body with no run of 19 digits (which may be an
    integer beyond 64 bits, a float to orjson) that orjson reads. Anything else is ``reply.json()``, with its
    errors (orjson refuses NaN, a number beyond a double, a lone surrogate and a byte order mark, which the
    standard library reads). A served answer of 100 passages (75 kB) is read in 60% of the time, the scan
    included."""
    content = reply.content
    if not may_hold_long_integer(content):
        try:
            return orjson.loads(content)
        except orjson.JSONDecodeError:
            pass
    return reply.json()
