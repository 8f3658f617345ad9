"""A process's private view of a published Qdrant Edge shard: many processes search one index at once.

Qdrant Edge takes an exclusive lock on a shard when it loads it, so a second
process could not open an index another one had open. A published shard is
therefore never loaded itself: each process loads its own mirror of it
(``<home>/indexes/.readers/<index>-<pid>-<n>/``). The bulk data files (vectors,
payload pages, the sparse index, the HNSW links, the write-ahead log's
segments) are hard links: an engine that only reads never writes them, which
``tests/test_index_concurrency.py`` checks by their modification times. Every
other file is copied, keeping its holes, because Qdrant Edge rewrites some of
them in place as it loads and closes a shard (bitmaps of deleted points,
trackers, status files): about a megabyte, a few milliseconds. Where hard links
cannot be made (another filesystem, a read-only home) the whole shard is copied
into a temporary folder instead.

Each private folder holds a lock its process keeps while the shard is open;
the next process to open an index removes folders whose owner has died.
"""

from __future__ import annotations

import errno
import itertools
import logging
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

from searchtrace.retriever.index.locks import FileLock

__all__ = ["READERS", "PrivateShard", "linked", "sparse_copy"]

log = logging.getLogger(__name__)

READERS = ".readers"
# Files an engine reading a shard never writes: linked. Anything else is copied.
_LINKED = re.compile(r"^(chunk_\d+\.mmap|page_\d+\.dat|matrix\.dat|inverted_index\.dat|point_to_values\.bin|"
                     r"values_to_points\.bin|links(_compressed)?\.bin|open-\d+|closed-\d+)$")
_LOCK = ".owner.lock"
_counter = itertools.count()


def linked(name: str) -> bool:
    """Whether a mirror hard-links the shard file called ``name`` (else it copies it)."""
    return _LINKED.match(name) is not None


def sparse_copy(src: Path, dst: Path) -> None:
    """Copy a file, leaving its holes as holes (``SEEK_DATA`` / ``SEEK_HOLE``)."""
    size = src.stat().st_size
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        fd = fin.fileno()
        offset = 0
        while offset < size:
            try:
                start = os.lseek(fd, offset, os.SEEK_DATA)
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # only a hole is left
                    break
                raise
            end = os.lseek(fd, start, os.SEEK_HOLE)
            fin.seek(start)
            fout.seek(start)
            remaining = end - start
            while remaining:
                chunk = fin.read(min(remaining, 1 << 20))
                fout.write(chunk)
                remaining -= len(chunk)
            offset = end
        fout.truncate(size)


def _mirror(src: Path, dst: Path, link: bool) -> None:
    """Recreate ``src``'s tree at ``dst``: the bulk data files hard-linked when ``link``, the others copied."""
    for root, dirs, files in os.walk(src):
        target = dst / Path(root).relative_to(src)
        target.mkdir(parents=True, exist_ok=True)
        for name in files:
            if link and linked(name):
                os.link(Path(root) / name, target / name)
            else:
                sparse_copy(Path(root) / name, target / name)
        dirs.sort()


class PrivateShard:
    """A private folder mirroring a published shard, owned by this process until :meth:`close`.

    Args:
        path: the mirror's shard folder (load it with Qdrant Edge).
        owner: its lock, held while the mirror is in use.
        folder: the mirror's root, removed by :meth:`close`.
    """

    def __init__(self, path: Path, owner: FileLock, folder: Path) -> None:
        self.path, self._owner, self._folder = path, owner, folder

    @classmethod
    def of(cls, shard: Path, readers: Path, name: str) -> PrivateShard:
        """Mirror ``shard`` under ``readers`` (hard links), or in a temporary folder (a copy) when it cannot."""
        mirror = f"{name}-{os.getpid()}-{next(_counter)}"
        try:
            sweep(readers)
            return cls._make(shard, readers / mirror, link=True)
        except OSError as exc:  # another filesystem, a read-only home, links refused
            log.info("cannot link %s into %s (%s): copying it to a temporary folder", shard, readers, exc)
        temporary = Path(tempfile.gettempdir()) / "searchtrace-shards"
        sweep(temporary)
        return cls._make(shard, temporary / mirror, link=False)

    @classmethod
    def _make(cls, shard: Path, folder: Path, link: bool) -> PrivateShard:
        folder.mkdir(parents=True)
        owner = FileLock(folder / _LOCK, "using a shard")
        if not owner.try_acquire():  # pragma: no cover - a fresh folder is ours
            raise OSError(f"cannot lock {folder}")
        try:
            _mirror(shard, folder / "shard", link)
        except BaseException:
            owner.release()
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return cls(folder / "shard", owner, folder)

    def close(self) -> None:
        """Remove the mirror (the published shard is untouched)."""
        shutil.rmtree(self._folder, ignore_errors=True)
        self._owner.release()


def _abandoned(folder: Path) -> bool:
    """The mirror's process is gone: its pid (in the name) is not running, or its lock is free
    (a reused pid) and the folder is over a minute old (not one being made right now)."""
    try:
        pid = int(folder.name.rsplit("-", 2)[1])
        os.kill(pid, 0)
    except (ValueError, IndexError, ProcessLookupError):
        return True
    except PermissionError:  # another user's live process
        return False
    try:
        old = time.time() - folder.stat().st_mtime > 60
    except OSError:
        return False
    lock = FileLock(folder / _LOCK, "using a shard")
    if old and lock.try_acquire():
        lock.release()
        return True
    return False


def sweep(readers: Path) -> int:
    """Remove mirrors whose process has died; returns how many."""
    removed = 0
    if not readers.is_dir():
        return 0
    for folder in readers.iterdir():
        if folder.is_dir() and _abandoned(folder):
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed
