"""Spans lost before a store or a collector took them, counted in a small file in the home.

Losses happen when the store cannot be written (a full disk, a damaged or
read-only file, a shared store out of reach), so the count cannot live in the
store: it lives beside it, in ``<home>/traces.losses``, which ``searchtrace
traces status`` reads. The file is made whole on first use (a header line and
:data:`SLOTS` blank lines of :data:`SLOT` bytes), so that counting later
overwrites bytes already on the disk and still works when the disk is full.
Each line counts one reason for one destination: spans, events, the first and
the last time. Processes share it under ``flock``; each update rewrites one line
in place.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from searchtrace.errors import SearchtraceError

__all__ = ["HEADER", "Loss", "LossLedger", "SLOT", "SLOTS"]

log = logging.getLogger(__name__)

SLOT = 256
"""Bytes per line, newline included."""
TARGET_BYTES = 120
"""Most bytes of a destination's name kept (the rest cut: it is the line's key, so cut the same way always)."""
SLOTS = 64
"""Lines of counts after the header: (reason, destination) pairs one home can count."""
HEADER = "searchtrace trace losses v1"
"""The first line: what the file is, and its format's version."""


@dataclass(frozen=True)
class Loss:
    """Spans lost for one reason on their way to one destination.

    Attributes:
        reason: why (a ``FailureKind`` value: ``disk_full``, ``buffer_full``...).
        target: where they were going (``store <path>``, ``otlp <endpoint>``), cut to fit a line.
        spans: spans lost.
        events: times it happened (batches lost).
        first_ns: when it first happened (Unix ns).
        last_ns: when it last happened (Unix ns).
    """

    reason: str
    target: str
    spans: int
    events: int
    first_ns: int
    last_ns: int

    def to_line(self) -> bytes:
        """The record as one line of exactly :data:`SLOT` bytes (its target cut to fit)."""
        head = f"{self.spans}\t{self.events}\t{self.first_ns}\t{self.last_ns}\t{_cut(self.reason, 40).decode()}\t"
        return (head.encode() + _cut(self.target, TARGET_BYTES)).ljust(SLOT - 1)[:SLOT - 1] + b"\n"

    @classmethod
    def from_line(cls, line: str, where: str) -> Loss | None:
        """The record of a line (None: a blank slot); raises SearchtraceError naming ``where``."""
        if not line.strip():
            return None
        parts = line.rstrip(" \n").split("\t")
        try:
            spans, events, first, last = (int(p) for p in parts[:4])
            reason, target = parts[4], parts[5]
        except (ValueError, IndexError):
            raise SearchtraceError(f"{where}: not a loss record (spans, events, first, last, reason, "
                                   f"target): {line.strip()[:60]!r}") from None
        return cls(reason, target, spans, events, first, last)


class LossLedger:
    """The home's losses file: counted into by every process, read by ``traces status``.

    Args:
        path: the file (``Home.trace_losses``).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._warned = False
        self._prepared: bool | None = None
        self._lock = threading.Lock()

    def prepare(self) -> bool:
        """Make the file whole now, while there is room (the first export does); True when it is. Tried once:
        a home that cannot take it (read-only) is said by :meth:`add`, if anything is ever lost."""
        if self._prepared is None:
            try:
                os.close(self._open())
                self._prepared = True
            except OSError:
                self._prepared = False
        return self._prepared

    def add(self, reason: str, target: str, spans: int, now_ns: int | None = None) -> bool:
        """Count ``spans`` lost for ``reason`` on their way to ``target``; False (said once) when it cannot."""
        if spans <= 0:
            return True
        now = time.time_ns() if now_ns is None else now_ns
        key = _cut(target, TARGET_BYTES).decode()
        try:
            with self._lock:
                fd = self._open()
                try:
                    slot, old = self._find(fd, reason, key)
                    loss = Loss(reason, key, spans, 1, now, now) if old is None else Loss(
                        reason, key, old.spans + spans, old.events + 1, old.first_ns, now)
                    os.pwrite(fd, loss.to_line(), slot * SLOT)
                finally:
                    os.close(fd)  # closing drops the lock
        except (OSError, SearchtraceError) as exc:
            self._cannot(exc)
            return False
        return True

    def read(self) -> list[Loss]:
        """Every count, in the order first counted; [] when nothing was ever lost (no file). Raises
        SearchtraceError naming the file and line when it is not a losses file."""
        try:
            text = self.path.read_bytes().decode("utf-8", "replace")
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise SearchtraceError(f"cannot read {self.path}: {exc.strerror}") from None
        return _parse(text, str(self.path))

    def _open(self) -> int:
        """The file, locked, with its header and every slot on the disk."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            size = os.fstat(fd).st_size
            if size < SLOT * (SLOTS + 1):
                blank = b" " * (SLOT - 1) + b"\n"
                whole = HEADER.encode().ljust(SLOT - 1) + b"\n" + blank * SLOTS
                os.pwrite(fd, whole[size:], size)
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _find(self, fd: int, reason: str, key: str) -> tuple[int, Loss | None]:
        """The slot counting (reason, key), else the first blank one; raises SearchtraceError when full."""
        text = os.pread(fd, SLOT * (SLOTS + 1), 0).decode("utf-8", "replace")
        blank = None
        for i, line in enumerate(_lines(text, str(self.path)), start=1):
            loss = Loss.from_line(line, f"{self.path}, line {i + 1}")
            if loss is None:
                blank = i if blank is None else blank
            elif loss.reason == reason and loss.target == key:
                return i, loss
        if blank is None:
            raise SearchtraceError(f"{self.path}: all {SLOTS} lines in use")
        return blank, None

    def _cannot(self, exc: BaseException) -> None:
        if not self._warned:
            self._warned = True
            log.warning("trace losses cannot be counted in %s: %s", self.path, exc)


def _parse(text: str, where: str) -> list[Loss]:
    found = (Loss.from_line(line, f"{where}, line {i}") for i, line in enumerate(_lines(text, where), start=2))
    return [loss for loss in found if loss is not None]


def _lines(text: str, where: str) -> list[str]:
    """The lines after the header; raises SearchtraceError when the header is not this format's."""
    lines = text.split("\n")
    if lines[0].rstrip() != HEADER:
        raise SearchtraceError(f"{where}: not a trace losses file (its first line is not {HEADER!r})")
    return lines[1:SLOTS + 1]


def _cut(text: str, room: int) -> bytes:
    """``text`` as UTF-8 without tabs or newlines, at most ``room`` bytes (never half a character)."""
    raw = text.replace("\t", " ").replace("\n", " ").encode()
    return raw[:room].decode("utf-8", "ignore").encode()
