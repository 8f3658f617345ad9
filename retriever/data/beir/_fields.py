"""Checked access to one field of a JSON record, naming the file and line on error."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from searchtrace.errors import DataError
from searchtrace.limits import MAX_ID_BYTES, id_too_long


def take_id(path: Path, number: int, obj: dict[str, Any], seen: dict[str, int]) -> str:
    """The record's ``_id``, checked to be a new non-empty string of at most :data:`~searchtrace.limits.MAX_ID_BYTES`."""
    if "_id" not in obj:
        raise DataError(str(path), number, "missing '_id'")
    value = obj["_id"]
    if not isinstance(value, str) or not value:
        raise DataError(str(path), number, f"'_id' must be a non-empty string, got {value!r}")
    check_id(path, number, "'_id'", value)
    first = seen.setdefault(value, number)
    if first != number:
        raise DataError(str(path), number, f"duplicate _id {value!r} (first on line {first})")
    return value


def check_id(path: Path, number: int, what: str, value: str) -> None:
    """Refuse an id longer than :data:`~searchtrace.limits.MAX_ID_BYTES` in UTF-8."""
    if len(value) * 4 > MAX_ID_BYTES and (size := len(value.encode("utf-8", "surrogatepass"))) > MAX_ID_BYTES:
        raise DataError(str(path), number, id_too_long(what, size))


def take_str(path: Path, number: int, obj: Mapping[str, Any], key: str, default: str | None) -> str:
    """``obj[key]`` checked to be a string; ``default`` when absent (None: required)."""
    if key not in obj:
        if default is None:
            raise DataError(str(path), number, f"missing '{key}'")
        return default
    value = obj[key]
    if not isinstance(value, str):
        raise DataError(str(path), number, f"'{key}' must be a string, got {type(value).__name__}")
    return value


def take_object(path: Path, number: int, obj: Mapping[str, Any], key: str) -> dict[str, Any]:
    """``obj[key]`` checked to be an object; ``{}`` when absent or null."""
    value = obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DataError(str(path), number, f"'{key}' must be an object, got {type(value).__name__}")
    return value
