"""OTLP ``AnyValue``s and ``KeyValue`` lists to the attribute values a ``ReadableSpan`` holds, within limits.

The SDK's attributes are strings, booleans, integers, floats and homogeneous sequences of those. OTLP also
sends bytes, maps (``kvlistValue``), nested and mixed arrays: bytes become base64 text, and a map or an array
that is not one primitive type becomes its JSON text, so nothing received is lost. A string longer than the
limit is cut, an array cut to as many items, each counted; an attribute with no value, or past the most
attributes kept, is dropped and counted.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Cuts", "attributes"]

Primitive = str | bool | int | float


@dataclass
class Cuts:
    """What the limits cut while converting one request: values truncated, attributes (events, links) dropped."""

    truncated: int = 0
    dropped: int = 0


def attributes(pairs: Iterable[Any], max_attributes: int, max_chars: int, cuts: Cuts) -> dict[str, Any]:
    """``KeyValue`` messages as an attribute dict: the first ``max_attributes`` with a value; a key sent twice
    keeps its last value (as the SDK's ``set_attribute`` would)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        value = _value(pair.value, max_chars, cuts)
        if value is None:
            cuts.dropped += 1
        elif pair.key in out or len(out) < max_attributes:
            out[pair.key] = value
        else:
            cuts.dropped += 1
    return out


def _value(any_value: Any, max_chars: int, cuts: Cuts) -> Any:
    """An attribute value (a primitive or a tuple of one type), or None for an empty ``AnyValue``."""
    which = any_value.WhichOneof("value")
    if which is None:
        return None
    if which in ("array_value", "kvlist_value"):
        plain = _plain(any_value, max_chars, cuts)
        if which == "array_value" and _homogeneous(plain):
            return tuple(plain)
        return _cut(json.dumps(plain, ensure_ascii=False, default=str), max_chars, cuts)
    return _primitive(any_value, which, max_chars, cuts)


def _primitive(any_value: Any, which: str, max_chars: int, cuts: Cuts) -> Primitive:
    if which == "bytes_value":
        return _cut(base64.b64encode(any_value.bytes_value[:max_chars]).decode(), max_chars, cuts)
    value = getattr(any_value, which)
    return _cut(value, max_chars, cuts) if isinstance(value, str) else value


def _plain(any_value: Any, max_chars: int, cuts: Cuts) -> Any:
    """An ``AnyValue`` as plain Python (lists and dicts), arrays and maps cut to ``max_chars`` items."""
    which = any_value.WhichOneof("value")
    if which == "array_value":
        items = any_value.array_value.values
        if len(items) > max_chars:
            cuts.truncated += 1
        return [_plain(item, max_chars, cuts) for item in items[:max_chars]]
    if which == "kvlist_value":
        entries = any_value.kvlist_value.values
        if len(entries) > max_chars:
            cuts.truncated += 1
        return {kv.key: _plain(kv.value, max_chars, cuts) for kv in entries[:max_chars]}
    return None if which is None else _primitive(any_value, which, max_chars, cuts)


def _homogeneous(items: list[Any]) -> bool:
    """A list the SDK holds as an attribute: one primitive type throughout (an empty list included)."""
    kinds = {type(item) for item in items}
    return len(kinds) <= 1 and kinds <= {str, bool, int, float}


def _cut(text: str, max_chars: int, cuts: Cuts) -> str:
    if len(text) <= max_chars:
        return text
    cuts.truncated += 1
    return text[:max_chars]
