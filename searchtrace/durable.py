"""Writes a crash cannot leave half done: fsync, then one rename into place.

Every file or folder the home holds that a reader may open while it is being
replaced (run folders, model folders, index folders, small stamps) is written
aside, flushed to disk, and renamed over its place, so a reader sees the old
one or the new one, never part of either. One module, so every package does it
the same way.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

__all__ = ["fsync_dir", "fsync_file", "fsync_tree", "write_atomic"]


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
    removed and ``path`` is left as it was.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        fsync_file(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
