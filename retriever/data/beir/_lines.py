"""Line readers that report the file and 1-based line of the first bad record.

Blank lines are skipped but still counted, so line numbers match an editor's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from searchtrace.errors import DataError

_BOM = "\ufeff"
_decode = json.JSONDecoder().decode


def lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, raw_line)`` for every non-blank line."""
    try:
        handle = path.open("rb")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
        raise DataError(str(path), None, f"cannot read file: {exc.strerror}") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            if raw.strip():
                yield number, raw


def json_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)``; an empty file or a non-object line is an error."""
    empty = True
    for number, raw in lines(path):
        empty = False
        yield number, _json_object(path, number, raw)
    if empty:
        raise DataError(str(path), 1, "empty file: expected at least one record")


def _json_object(path: Path, number: int, raw: bytes) -> dict[str, Any]:
    """One line decoded as a JSON object (a BOM is allowed on line 1)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(str(path), number, f"invalid JSON: not UTF-8 ({exc.reason})") from None
    if number == 1 and text.startswith(_BOM):
        text = text[1:]
    try:
        obj = _decode(text)
    except json.JSONDecodeError as exc:
        raise DataError(str(path), number, f"invalid JSON at column {exc.colno}: {exc.msg}") from None
    if type(obj) is not dict:
        raise DataError(str(path), number, f"expected a JSON object, got {type(obj).__name__}")
    return obj
