"""Who has a trace store open for writing, and whether one of them stopped without closing it.

Each process that writes a store holds an exclusive ``flock`` on a marker file of
its own in ``<store>.writers/`` for as long as it writes, and removes it when it
closes the store. A marker that can be locked by another process belongs to a
writer that ended without closing (``kill -9``, a crash, a power cut). Every
process that opens the store for writing runs SQLite's quick check before it
writes (:func:`traces.damage.is_damaged`; about 40 ms for 10,000 traces), so a
store damaged then, or since by anything else, is set aside and said, never
written on as if whole; the warning names an unclean shutdown when one was found.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["WriterMark", "register"]

_SUFFIX = ".writers"
_GUARD = ".lock"


@dataclass
class WriterMark:
    """This process's marker on a store (an open, locked file); :meth:`release` on a clean close.

    Attributes:
        path: the marker file.
        unclean: the markers of writers that ended without closing the store, found (and removed) when
            this one was made.
    """

    path: Path
    fd: int
    unclean: int = 0

    def forget(self) -> None:
        """Close this copy of the marker without removing it (a forked child: the marker is its parent's)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def release(self) -> None:
        """Remove the marker: this process closed the store cleanly."""
        if self.fd < 0:
            return
        try:
            self.path.unlink(missing_ok=True)
        finally:
            os.close(self.fd)
            self.fd = -1


def register(store: Path) -> WriterMark | None:
    """Mark this process as a writer of ``store``; None where no marker can be made (a read-only folder,
    no ``flock``: nothing is then known about earlier writers).

    The folder's own lock is held while markers are looked at and made, so a
    marker is never taken for abandoned in the moment between its creation and
    its lock.
    """
    folder = store.with_name(store.name + _SUFFIX)
    guard = -1
    try:
        folder.mkdir(parents=True, exist_ok=True)
        guard = os.open(folder / _GUARD, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o644)
        fcntl.flock(guard, fcntl.LOCK_EX)
        unclean = _remove_abandoned(folder)
        path = folder / f"{os.getpid()}-{os.urandom(4).hex()}"
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            path.unlink(missing_ok=True)
            return None
        return WriterMark(path, fd, unclean)
    except OSError:
        return None
    finally:
        if guard >= 0:
            os.close(guard)  # closing drops the folder's lock


def _remove_abandoned(folder: Path) -> int:
    """Remove the markers no live process holds; how many there were."""
    found = 0
    for marker in folder.iterdir():
        if marker.name == _GUARD:
            continue
        try:
            fd = os.open(marker, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: its writer is alive
            continue
        else:
            marker.unlink(missing_ok=True)
            found += 1
        finally:
            os.close(fd)
    return found
