"""Typed reads of one JSON object of a run folder, with errors that name the file and line."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from searchtrace.errors import DataError
from searchtrace.typedreads import FLAG, INTEGER, LIST, NUMBER, OBJECT, STRING, STRINGS, Kind, read

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
        return self.read(key, Kind(kind, check), default)

    def read(self, key: str, kind: Kind[Any], default: Any = _MISSING) -> Any:
        """The value at ``key`` as ``kind``; ``default`` when it is absent (none given: a missing key is refused)."""
        if key not in self.data:
            if default is _MISSING:
                raise self.error(key, f"missing (expected {kind.expected})")
            return default
        return read(self.data[key], kind, key, self._refuse)

    def _refuse(self, key: str, expected: str, got: object) -> DataError:
        return self.error(key, f"expected {expected}, got {got!r:.80}")

    def text(self, key: str, default: Any = _MISSING) -> str:
        return str(self.read(key, STRING, default))

    def opt_text(self, key: str, default: str | None = None) -> str | None:
        value = self.read(key, _OPT_STRING, default)
        return None if value is None else str(value)

    def integer(self, key: str, default: Any = _MISSING) -> int:
        return int(self.read(key, INTEGER, default))

    def number(self, key: str, default: Any = _MISSING) -> float:
        return float(self.read(key, NUMBER, default))

    def opt_number(self, key: str, default: float | None = None) -> float | None:
        value = self.read(key, _OPT_NUMBER, default)
        return None if value is None else float(value)

    def flag(self, key: str, default: Any = _MISSING) -> bool:
        return bool(self.read(key, FLAG, default))

    def array(self, key: str, default: Any = _MISSING) -> list[Any]:
        return list(self.read(key, LIST, default))

    def obj(self, key: str, default: Any = _MISSING) -> Fields:
        value = self.read(key, OBJECT, default)
        return Fields(value, self.path, self.line, f"{self.prefix}{key}.")

    def opt_obj(self, key: str) -> Fields | None:
        value = self.read(key, _OPT_OBJECT, None)
        return None if value is None else Fields(value, self.path, self.line, f"{self.prefix}{key}.")

    def numbers(self, key: str, default: Any = _MISSING) -> dict[str, float | None]:
        """An object of numbers (or nulls), by key."""
        value = self.read(key, _NUMBERS, default)
        return {str(k): None if x is None else float(x) for k, x in value.items()}

    def finite(self, key: str, default: Any = _MISSING) -> dict[str, float]:
        """An object of numbers, by key (nulls left out)."""
        return {k: v for k, v in self.numbers(key, default).items() if v is not None}

    def strings(self, key: str, default: Any = _MISSING) -> tuple[str, ...]:
        return tuple(self.read(key, STRINGS, default))


_OPT_STRING, _OPT_NUMBER, _OPT_OBJECT = STRING.or_null(), NUMBER.or_null(), OBJECT.or_null()
_NUMBERS: Kind[dict[str, Any]] = Kind("an object of numbers",
                                 lambda v: isinstance(v, dict) and all(x is None or NUMBER.refused(x) is None for x in v.values()))


def check_version(data: Mapping[str, Any], path: str, line: int | None = None) -> int:
    """The record's format version (1 when it has none); newer or malformed ones are refused.

    Raises:
        DataError: a version this code does not read, naming the file and what to do.
    """
    version = data.get("format", 1)
    if INTEGER.refused(version) is not None or version < 1:
        raise DataError(path, line, f"format: expected a run-folder format version >= 1, got {version!r}")
    if version > FORMAT_VERSION:
        raise DataError(path, line, f"run-folder format {version} is newer than this searchtrace reads "
                                    f"({FORMAT_VERSION}); upgrade searchtrace to read it")
    return int(version)
