"""Typed reads of one JSON object of a run folder, with errors that name the file and line."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from searchtrace.errors import DataError

__all__ = ["FORMAT_VERSION", "Fields", "check_version"]

FORMAT_VERSION = 3
"""The run-folder format this code writes. Version 1 is the format before it carried a
version (same files and keys, features as a list); version 2 had no ``external`` section
and no separate fingerprints (``dataset.fingerprints``) in ``run.json``. Older formats are
read, never written."""

_MISSING: Any = object()


class Fields:
    """One JSON object read key by key; a missing or mistyped value is a :class:`DataError`.

    Args:
        data: the decoded JSON value (must be an object).
        path: the file it came from.
        line: its 1-based line (journal records), or None (whole-file records).
        prefix: the key path of a nested object, for messages (``"confidence."``).
    """

    def __init__(self, data: object, path: str, line: int | None = None, prefix: str = "") -> None:
        if not isinstance(data, dict):
            raise DataError(path, line, f"{prefix or 'record'} must be a JSON object, got {type(data).__name__}")
        self.data: dict[str, Any] = data
        self.path, self.line, self.prefix = path, line, prefix

    def error(self, key: str, what: str) -> DataError:
        return DataError(self.path, self.line, f"{self.prefix}{key}: {what}")

    def has(self, key: str) -> bool:
        return key in self.data

    def get(self, key: str, check: Callable[[Any], bool], kind: str, default: Any = _MISSING) -> Any:
        if key not in self.data:
            if default is _MISSING:
                raise self.error(key, f"missing (expected {kind})")
            return default
        value = self.data[key]
        if not check(value):
            raise self.error(key, f"expected {kind}, got {value!r:.80}")
        return value

    def text(self, key: str, default: Any = _MISSING) -> str:
        return str(self.get(key, lambda v: isinstance(v, str), "a string", default))

    def opt_text(self, key: str, default: str | None = None) -> str | None:
        value = self.get(key, lambda v: v is None or isinstance(v, str), "a string or null", default)
        return None if value is None else str(value)

    def integer(self, key: str, default: Any = _MISSING) -> int:
        return int(self.get(key, _is_int, "an integer", default))

    def number(self, key: str, default: Any = _MISSING) -> float:
        return float(self.get(key, _is_number, "a number", default))

    def opt_number(self, key: str, default: float | None = None) -> float | None:
        value = self.get(key, lambda v: v is None or _is_number(v), "a number or null", default)
        return None if value is None else float(value)

    def flag(self, key: str, default: Any = _MISSING) -> bool:
        return bool(self.get(key, lambda v: isinstance(v, bool), "true or false", default))

    def array(self, key: str, default: Any = _MISSING) -> list[Any]:
        return list(self.get(key, lambda v: isinstance(v, list), "a list", default))

    def obj(self, key: str, default: Any = _MISSING) -> Fields:
        value = self.get(key, lambda v: isinstance(v, dict), "an object", default)
        return Fields(value, self.path, self.line, f"{self.prefix}{key}.")

    def opt_obj(self, key: str) -> Fields | None:
        value = self.get(key, lambda v: v is None or isinstance(v, dict), "an object or null", None)
        return None if value is None else Fields(value, self.path, self.line, f"{self.prefix}{key}.")

    def numbers(self, key: str, default: Any = _MISSING) -> dict[str, float | None]:
        """An object of numbers (or nulls), by key."""
        value = self.get(key, lambda v: isinstance(v, dict) and all(x is None or _is_number(x) for x in v.values()),
                         "an object of numbers", default)
        return {str(k): None if x is None else float(x) for k, x in value.items()}

    def finite(self, key: str, default: Any = _MISSING) -> dict[str, float]:
        """An object of numbers, by key (nulls left out)."""
        return {k: v for k, v in self.numbers(key, default).items() if v is not None}

    def strings(self, key: str, default: Any = _MISSING) -> tuple[str, ...]:
        value = self.get(key, lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
                         "a list of strings", default)
        return tuple(value)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_version(data: Mapping[str, Any], path: str, line: int | None = None) -> int:
    """The record's format version (1 when it has none); newer or malformed ones are refused.

    Raises:
        DataError: a version this code does not read, naming the file and what to do.
    """
    version = data.get("format", 1)
    if not _is_int(version) or version < 1:
        raise DataError(path, line, f"format: expected a run-folder format version >= 1, got {version!r}")
    if version > FORMAT_VERSION:
        raise DataError(path, line, f"run-folder format {version} is newer than this searchtrace reads "
                                    f"({FORMAT_VERSION}); upgrade searchtrace to read it")
    return int(version)
