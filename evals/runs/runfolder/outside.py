"""The run folders a home knows outside itself: written with ``eval --out DIR`` anywhere.

``<home>/runs.outside`` lists them, one absolute path a line, so the run index,
``runs list`` and the dashboard see them beside ``<home>/runs``. A path is added
when its run is written, under a lock (``runs.outside.lock``), and the file is
replaced whole (write aside, then rename), so a reader never sees half of it. A
listed folder that is gone is reported as gone, never an error: it may be on a
disk that comes back; a folder still being written is present, and the run index
leaves it out until it is complete, as it does in ``<home>/runs``.
"""

from __future__ import annotations

import fcntl
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from searchtrace.durable import write_atomic
from searchtrace.home import Home

__all__ = ["OutsideRuns", "list_written", "outside_runs", "record_outside"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OutsideRuns:
    """The run folders a home lists outside itself.

    Attributes:
        present: the listed folders that exist, in the order they were recorded (``RunFolder.all_in_home`` keeps
            those holding a completed run).
        gone: the listed folders that no longer exist.
    """

    present: tuple[Path, ...]
    gone: tuple[Path, ...]


def _listed(home: Home) -> list[Path]:
    """The paths ``<home>/runs.outside`` lists (a line that is no absolute path is skipped, with a warning)."""
    try:
        text = home.runs_outside.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    except OSError as exc:
        log.warning("%s: cannot read (%s): runs written with --out are not listed", home.runs_outside,
                    exc.strerror or exc)
        return []
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip() and not Path(line).is_absolute():
            log.warning("%s:%d: not an absolute path, skipped", home.runs_outside, number)
        elif line.strip():
            out.append(Path(line))
    return out


def outside_runs(home: Home) -> OutsideRuns:
    """The run folders ``home`` lists outside itself, split into present and gone."""
    present: list[Path] = []
    gone: list[Path] = []
    for path in _listed(home):
        try:
            (present if path.is_dir() else gone).append(path)
        except OSError:  # a path the file system refuses to look at (too long, no permission): gone for us
            gone.append(path)
    return OutsideRuns(tuple(present), tuple(gone))


@contextmanager
def _locked(home: Home) -> Iterator[None]:
    lock = home.runs_outside.with_name(f"{home.runs_outside.name}.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def record_outside(home: Home, folder: Path) -> bool:
    """List ``folder`` in ``home`` when it lies outside ``<home>/runs``; True when it was added.

    Raises:
        OSError: the list cannot be written (the caller warns: the run itself is written).
    """
    path = folder.resolve()
    if path.parent == home.runs.resolve():
        return False  # one of the home's own runs: listed by being there
    with _locked(home):
        listed = _listed(home)
        if path in listed:
            return False
        lines = "".join(f"{p}\n" for p in [*listed, path])
        write_atomic(home.runs_outside, lambda tmp: tmp.write_text(lines, encoding="utf-8"))
    return True


def list_written(home: Home, folder: Path) -> None:
    """:func:`record_outside` for a run just written: a list that cannot be written is a warning, not a failure."""
    try:
        record_outside(home, folder)
    except OSError as exc:
        log.warning("%s is written, but %s cannot list it (%s): the dashboard and runs list will not show it",
                    folder, home.runs_outside, exc.strerror or exc)
