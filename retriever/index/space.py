"""Space for an index build, checked (and when tight, reserved) before anything is written through a memory map.

Qdrant Edge creates its shard's files at their full size but sparse (a vector
storage chunk, the write-ahead log, the payload pages: about 256 MB for the
sample) and fills them through memory maps. A disk that cannot hold a page
when it is first written does not fail a ``write``: the process dies of
SIGBUS, with no line and no cleanup. So, right after the shard is created and
before a point is written, the build compares the free space with what the
holes and the data can take, refuses cleanly when the disk cannot hold them,
and when the margin is thin makes the holes real (``posix_fallocate``) so that
no later page write can find the disk full.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

__all__ = ["CHUNK", "MB", "SpaceNeeded", "allocate", "chunked", "holes", "reserve"]

MB = 1 << 20

CHUNK = 32 * MB
"""The size of a Qdrant Edge vector storage chunk file (``chunk_<n>.mmap``), allocated whole when made."""

_MARGIN = 16 * MB
"""Room kept beside the estimate (the manifest, the graph, the term statistics, SQLite's journal)."""


class SpaceNeeded(OSError):
    """The disk cannot hold the index: ENOSPC, naming the folder, the space needed and the space free."""

    def __init__(self, folder: Path, needed: int, free: int, what: str = "for the index") -> None:
        super().__init__(errno.ENOSPC, f"No space left {what}: it needs about {_mb(needed)}, "
                                       f"{_mb(free)} free", str(folder))
        self.needed, self.free = needed, free


def _mb(size: int) -> str:
    return f"{max(size, 0) / MB:,.0f} MB"


def chunked(size: int) -> int:
    """The chunk files a vector storage of ``size`` bytes takes (at least one)."""
    return max(1, -(-size // CHUNK)) * CHUNK


def holes(folder: Path) -> dict[Path, int]:
    """Each file under ``folder`` that holds unallocated bytes (a sparse file), and how many."""
    out = {}
    for path in folder.rglob("*"):
        try:
            stat = path.lstat()
        except OSError:
            continue
        if path.is_file() and not path.is_symlink() and stat.st_size > stat.st_blocks * 512:
            out[path] = stat.st_size - stat.st_blocks * 512
    return out


def reserve(folder: Path, data_bytes: int, index_root: Path) -> None:
    """Make sure the disk of ``folder`` can take its sparse files' holes and ``data_bytes`` more.

    Raises:
        SpaceNeeded: it cannot (nothing has been written through a memory map yet; the caller removes
            ``folder``). The error names ``index_root``, where the user sees indexes.
    """
    sparse = holes(folder)
    needed = sum(sparse.values()) + data_bytes + _MARGIN
    free = shutil.disk_usage(folder).free
    if free < needed:
        raise SpaceNeeded(index_root, needed, free)
    if free < 2 * needed:  # a thin margin: make the holes real now, while a full disk is still an error
        for path in sparse:
            allocate(path, index_root, needed)


def allocate(path: Path, index_root: Path, needed: int, what: str = "for the index") -> None:
    """Make the holes of ``path`` real (``posix_fallocate``), so that no page written or mapped later finds the disk full.

    Raises:
        SpaceNeeded: the disk cannot hold them (named ``index_root``, the ``needed`` estimate, the space free).
    """
    fd = os.open(path, os.O_RDWR)
    try:
        before = os.fstat(fd)
        os.posix_fallocate(fd, 0, before.st_size)
        # the bytes are what they were (a hole reads as zeros): keep the times too, which a manifest records,
        # so that the next open does not hash the file again (or, under a reader, see a file changed)
        os.utime(fd, ns=(before.st_atime_ns, before.st_mtime_ns))
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise SpaceNeeded(index_root, needed, shutil.disk_usage(path.parent).free, what) from None
        if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):  # a file system without it: checked above
            raise
    finally:
        os.close(fd)
