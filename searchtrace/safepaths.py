"""Names that come from outside a folder (a store's row, a URL, a span, a file) checked before they become paths.

:func:`inside` is the one door: a relative name of plain parts (no empty part,
no ``.`` or ``..``, not absolute, no drive, no backslash, no NUL or other
control character, each part at most 255 bytes and the whole bounded),
resolved inside its folder (an existing symlink in the folder that leads out of
it is refused), else a :class:`~searchtrace.errors.ValidationError` naming the
field and the value.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from searchtrace.errors import ValidationError

__all__ = ["MAX_NAME_BYTES", "MAX_PART_BYTES", "checked_name", "checked_part", "inside"]

MAX_PART_BYTES = 255
"""The longest part of a name, in UTF-8 bytes (every common filesystem's limit)."""
MAX_NAME_BYTES = 1024
"""The longest whole name, in UTF-8 bytes."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DRIVE = re.compile(r"^[A-Za-z]:")
_SHOWN = 80  # characters of a refused value shown in the message


def _refuse(field: str, value: object, why: str) -> ValidationError:
    shown = repr(value)
    if len(shown) > _SHOWN:
        shown = shown[:_SHOWN] + "…"
    return ValidationError(f"{field} {shown} is not a plain relative name: {why}", field=field)


def checked_name(name: object, field: str) -> tuple[str, ...]:
    """The parts of ``name`` (split on ``/``), each checked; see :func:`inside`.

    Raises:
        ValidationError: ``name`` is not a relative name of plain parts, naming ``field``.
    """
    if not isinstance(name, str):
        raise _refuse(field, name, "not a string")
    if not name:
        raise _refuse(field, name, "empty")
    if _CONTROL.search(name):
        raise _refuse(field, name, "a NUL or control character")
    if "\\" in name:
        raise _refuse(field, name, "a backslash")
    if name.startswith("/") or _DRIVE.match(name):
        raise _refuse(field, name, "an absolute path")
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        raise _refuse(field, name, "not valid UTF-8") from None
    if size > MAX_NAME_BYTES:
        raise _refuse(field, name, f"longer than {MAX_NAME_BYTES} bytes")
    parts = tuple(name.split("/"))
    for part in parts:
        if part in ("", ".", ".."):
            raise _refuse(field, name, f"a part {part!r}")
        if len(part.encode("utf-8")) > MAX_PART_BYTES:
            raise _refuse(field, name, f"a part longer than {MAX_PART_BYTES} bytes")
    return parts


def checked_part(name: object, field: str) -> str:
    """``name``, checked to be one plain part of a path (a file or folder name, no ``/``); see :func:`inside`.

    Raises:
        ValidationError: ``name`` is not one plain relative part, naming ``field``.
    """
    parts = checked_name(name, field)
    if len(parts) != 1:
        raise _refuse(field, name, "a path, not one name")
    return parts[0]


def inside(folder: str | os.PathLike[str], name: object, field: str) -> Path:
    """``folder / name``, once ``name`` is checked to be a plain relative name that stays inside ``folder``.

    Args:
        folder: the folder the name is relative to (it need not exist yet).
        name: the name from outside (a store's row, a URL, a span, a file).
        field: what the name is, for the error (``file name``, ``run id``, ``tag``...).

    Raises:
        ValidationError: ``name`` is empty, absolute, holds a drive, a backslash, a NUL or control
            character, an empty, ``.`` or ``..`` part, a part over 255 bytes or is over 1024 bytes in
            all, or an existing symlink in ``folder`` leads it outside; the message names ``field``.
    """
    parts = checked_name(name, field)
    base = Path(folder)
    path = base.joinpath(*parts)
    root = base.resolve()
    resolved = path.resolve()  # follows the symlinks that exist; the rest is kept as written
    if resolved != root and root not in resolved.parents:
        raise _refuse(field, name, f"it leads outside {str(base)!r} (a symlink)")
    return path
