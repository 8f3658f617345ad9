"""Line readers that report the file and 1-based line of the first bad record.

Blank lines are skipped but still counted, so line numbers match an editor's. A line
is read at most ``limit`` bytes at a time (:mod:`searchtrace.limits`): one longer is
refused naming its file and line without being read whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from searchtrace.errors import DataError
from searchtrace.limits import line_too_long

_BOM = "\ufeff"
_decode = json.JSONDecoder().decode


def lines(path: Path, limit: int) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, raw_line)`` for every non-blank line; a line past ``limit`` bytes (its newline aside) is an error."""
    try:
        handle = path.open("rb")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
        raise DataError(str(path), None, f"cannot read file: {exc.strerror}") from None
    number = 0
    with handle:
        while raw := handle.readline(limit + 1):
            number += 1
            if len(raw) > limit and not raw.endswith(b"\n"):
                raise DataError(str(path), number, line_too_long(limit))
            if raw.strip():
                yield number, raw


def json_objects(path: Path, limit: int) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)``; an empty file, a non-object line or one past ``limit`` bytes is an error."""
    empty = True
    for number, raw in lines(path, limit):
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
