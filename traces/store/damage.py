"""A damaged trace store: detected, set aside under a new name, and a new one started.

Kept apart from the store (which calls it when a writer finds damage) and from
the salvage (``traces.repair``, which reads the copies set aside): it knows the
files, not the schema.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from pathlib import Path
from typing import Callable

__all__ = ["ASIDE", "CHECKED", "CHECK_EVERY_S", "SIDECARS", "Recheck", "damaged_copies", "is_damaged", "mark_whole",
           "set_aside", "unchanged_since_whole",
           "set_aside_damaged"]

log = logging.getLogger(__name__)

SIDECARS = ("", "-wal", "-shm", "-journal")
"""The suffixes of a store's files: the database, its WAL, its shared memory, a rollback journal."""
ASIDE = ".damaged-"
"""What a store set aside has in its name, before the time it was set aside."""
CHECK_EVERY_S = 600.0
"""How often a long-running writer checks its store again (a page damaged under it meanwhile)."""


class Recheck:
    """When a writer that has been writing a while checks its store again: every ``every_s`` seconds.

    Args:
        every_s: seconds between checks; None never checks again.
        clock: monotonic seconds (a test passes its own).
    """

    def __init__(self, every_s: float | None = CHECK_EVERY_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.every_s = every_s
        self._clock = clock
        self._last = clock()

    def checked(self) -> None:
        """The store was just checked."""
        self._last = self._clock()

    def due(self) -> bool:
        """True (once per period) when the store is due a check."""
        if self.every_s is None or self._clock() - self._last < self.every_s:
            return False
        self.checked()
        return True


def set_aside(path: Path) -> Path:
    """Rename a store and its WAL and shared-memory files to ``<name>.damaged-<UTC time>``; returns the new name."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    target = path.with_name(f"{path.name}{ASIDE}{stamp}")
    for suffix in SIDECARS:
        source = path.with_name(path.name + suffix)
        if source.exists():
            source.rename(target.with_name(target.name + suffix))
    return target


def set_aside_damaged(path: Path, why: object) -> Path | None:
    """Set a damaged store aside (:func:`set_aside`) and say so in one warning; None when it cannot be moved."""
    try:
        aside = set_aside(path)
    except OSError as err:
        log.warning("the trace store %s is damaged (%s) and cannot be moved aside: %s", path, why, err)
        return None
    log.warning("the trace store %s was damaged (%s): moved to %s and a new one started; "
                "`searchtrace traces repair` copies what it can of the old one into the new", path, why, aside)
    return aside


def damaged_copies(path: Path) -> list[Path]:
    """Stores set aside beside ``path``, oldest first."""
    return sorted(p for p in path.parent.glob(f"{path.name}{ASIDE}*") if not p.name.endswith(SIDECARS[1:]))


CHECKED = ".checked"
"""The suffix of the file naming the state (inode, size, modification time) a store was last known whole in."""


def _state(path: Path) -> str:
    st = path.stat()
    return f"{st.st_ino} {st.st_size} {st.st_mtime_ns}"


def unchanged_since_whole(path: Path) -> bool:
    """True when ``path`` is byte for byte where a writer left it known whole (found whole, or written on from
    there and closed cleanly): its first write in another process then skips the check, which on a store of a
    million traces reads gigabytes. Anything that touched the file since (another writer, a damaged copy put
    in its place, an edit) changed its time or size, and the check is made."""
    try:
        return path.with_name(path.name + CHECKED).read_text(encoding="ascii").strip() == _state(path)
    except (OSError, ValueError):
        return False


def mark_whole(path: Path) -> None:
    """Record the state ``path`` is known whole in (best effort: a home that cannot take it checks again)."""
    try:
        path.with_name(path.name + CHECKED).write_text(_state(path), encoding="ascii")
    except OSError:
        pass


def is_damaged(path: Path) -> bool:
    """True when SQLite cannot open the store or finds it inconsistent."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return conn.execute("PRAGMA quick_check").fetchall() != [("ok",)]
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return True
