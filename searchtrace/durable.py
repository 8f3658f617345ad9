"""Writes a crash cannot leave half done: fsync, then one rename into place.

Every file or folder the home holds that a reader may open while it is being
replaced (run folders, model folders, index folders, small stamps) is written
aside, flushed to disk, and renamed over its place, so a reader sees the old
one or the new one, never part of either. One module, so every package does it
the same way.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["fsync_dir", "fsync_file", "fsync_tree", "naming", "write_atomic"]


@contextmanager
def naming(path: Path) -> Iterator[None]:
    """Give an ``OSError`` raised without a file name the name of ``path``.

    ``open`` names its file, but a ``write``, ``flush`` or ``fsync`` on a full
    disk raises ENOSPC naming none, and the line a user reads must say which
    file could not be written.
    """
    try:
        yield
    except OSError as exc:
        if exc.filename is None:
            exc.filename = str(path)
        raise


def fsync_file(path: Path) -> None:
    """Flush ``path``'s contents to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(folder: Path) -> None:
    """Flush ``folder``'s entries (a rename into it) to disk; a file system that cannot is left as it is."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def fsync_tree(folder: Path) -> None:
    """Flush every file and folder under ``folder`` (before the folder is renamed into place)."""
    for root, _, files in os.walk(folder):
        for name in files:
            fsync_file(Path(root) / name)
        fsync_dir(Path(root))


def write_atomic(path: Path, write: Callable[[Path], object]) -> None:
    """Call ``write(tmp)`` for a temporary file beside ``path``, fsync it, and rename it over ``path``.

    The parent folder is made if missing. On any failure the temporary file is
    removed and ``path`` is left as it was; an ``OSError`` that names no file
    (a full disk) is given ``path``'s name.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with naming(path):
            write(tmp)
            fsync_file(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
