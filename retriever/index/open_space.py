"""Space for opening an index, checked before its shard is mirrored and loaded.

Opening writes little where a read through a memory map of a hole reads zeros
(ext4: 0.4 MB for the sample, the mirror's copied files). On tmpfs that read
makes the page real, and Qdrant Edge reads some files whole when it loads a
shard. Measured on the sample, copied with its holes (``cp``, a restored backup)
onto a tmpfs: one ``search`` made 108 MB real, its vector chunks
(``chunk_<n>.mmap``) and its payload index pages (``payload_index/*/page_<n>.dat``)
and not the payload storage, the BM25 store or the write-ahead log; with 20 MB
free (44 MB in the report of issue 35) that load died of SIGBUS, exit 135 and
not a line. On an index built on the tmpfs, a search's use peaked 14 MB above
its start and fell back at close: the mirror's copied files (bitmaps, trackers)
are mapped too, as is ``vectors.npy`` (passage parts), read as searches need
it. So the estimate is, per file:

* linked into the mirror and loaded whole, or mapped beside the shard: its
  holes, where reading a map of a hole takes space (tmpfs, or a filesystem
  whose type cannot be read);
* copied into the mirror: its size there, else its allocated bytes;

plus :data:`MARGIN`. When it fits and holes take space, the linked files' holes
are allocated first (``posix_fallocate``: the published files share them), so a
disk that fills between the check and the load is an error, not a SIGBUS.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from searchtrace.retriever.index.private_shard import linked
from searchtrace.retriever.index.space import MB, SpaceNeeded, allocate

__all__ = ["MARGIN", "OpenNeeds", "check_open", "filesystem_type", "open_needs"]

MARGIN = 4 * MB
"""Room kept beside the estimate: what loading rewrites (status files) and the search's own small writes."""

HOLES_TAKE_SPACE = frozenset({"tmpfs", "ramfs"})
"""Filesystems where a page of a memory map read over a hole is allocated (Linux's shmem and ramfs)."""

WHAT = "to open the index"
_LOADED = re.compile(r"^(chunk_\d+\.mmap|page_\d+\.dat)$")
_MOUNTINFO = Path("/proc/self/mountinfo")


class Statvfs(Protocol):
    """The fields of :func:`os.statvfs` the check reads."""

    @property
    def f_bavail(self) -> int: ...  # pragma: no cover - a protocol

    @property
    def f_frsize(self) -> int: ...  # pragma: no cover - a protocol

    @property
    def f_flag(self) -> int: ...  # pragma: no cover - a protocol


@dataclass(frozen=True)
class OpenNeeds:
    """What opening a shard can write: ``needed`` bytes in all; ``holes`` are the linked files loaded whole."""

    needed: int
    holes: dict[Path, int]


def _loaded_whole(path: Path) -> bool:
    return bool(_LOADED.match(path.name)) and (path.suffix == ".mmap" or "payload_index" in path.parts)


def _files(folder: Path) -> list[tuple[Path, os.stat_result]]:
    out = []
    for path in sorted(folder.rglob("*")):
        try:
            stat = path.lstat()
        except OSError:
            continue
        if path.is_file() and not path.is_symlink():
            out.append((path, stat))
    return out


def _hole(stat: os.stat_result) -> int:
    return max(stat.st_size - stat.st_blocks * 512, 0)


def open_needs(shard: Path, holes_take_space: bool, mapped: Iterable[Path] = ()) -> OpenNeeds:
    """The estimate for mirroring and loading ``shard`` and mapping the files ``mapped`` (see the module's docstring)."""
    needed, loaded = MARGIN, []
    for path, stat in _files(shard):
        if not linked(path.name):
            needed += stat.st_size if holes_take_space else stat.st_blocks * 512
        elif _loaded_whole(path):
            loaded.append((path, stat))
    for path in mapped:
        try:
            loaded.append((path, path.stat()))
        except OSError:
            continue
    holes = {path: _hole(stat) for path, stat in loaded if holes_take_space and _hole(stat)}
    return OpenNeeds(needed + sum(holes.values()), holes)


def _unescape(field: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def filesystem_type(path: Path, mountinfo: Path = _MOUNTINFO) -> str | None:
    """The type of the filesystem holding ``path`` (``tmpfs``, ``ext4``...), or None when it cannot be read."""
    try:
        lines = mountinfo.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    target, best, kind = str(path.resolve()), "", None
    for line in lines:  # "id parent dev root mountpoint options ... - type source options"
        left, _, right = line.partition(" - ")
        fields = left.split()
        if len(fields) < 5 or not right.split():
            continue
        point = _unescape(fields[4])
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):  # the deepest mount; of two on one point, the later
            best, kind = point, right.split()[0]
    return kind


def check_open(shard: Path, index_root: Path, mapped: Iterable[Path] = (), *,
               statvfs: Callable[[Path], Statvfs] | None = None,
               fs_type: Callable[[Path], str | None] | None = None) -> OpenNeeds:
    """Refuse to open ``shard`` (and map ``mapped``) when the disk cannot take what that writes; returns the estimate.

    Raises:
        SpaceNeeded: naming ``index_root`` (where the user sees indexes), the space needed and the space free.
    """
    kind = (fs_type or filesystem_type)(shard)
    needs = open_needs(shard, kind is None or kind in HOLES_TAKE_SPACE, mapped)
    stat = (statvfs or os.statvfs)(shard)
    if stat.f_flag & os.ST_RDONLY:  # nothing is written there: the mirror is copied to a temporary folder
        return needs
    free = stat.f_bavail * stat.f_frsize
    if free < needs.needed:
        raise SpaceNeeded(index_root, needs.needed, free, WHAT)
    for path in needs.holes:
        try:
            allocate(path, index_root, needs.needed, WHAT)
        except OSError as exc:  # a published file we may not write: the load reads it, as it would have
            if exc.errno not in (errno.EACCES, errno.EROFS, errno.EPERM):
                raise
    return needs
