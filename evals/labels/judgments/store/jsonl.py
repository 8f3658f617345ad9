"""``judgments.jsonl``: the judgments of a dataset, one JSON line each, appended and never rewritten.

Appends are safe from several processes at once: each takes an exclusive
``flock`` on the file, cuts a torn last line (a writer killed mid-write left a
line without its newline), writes its lines in one ``write`` on an
``O_APPEND`` descriptor and fsyncs before it lets go. An append whose write or
fsync fails (a full disk) cuts the file back to its size before, still under
the lock: all of an append is kept, or none of it. A reader takes a shared
lock and never uses a last line without its newline. :meth:`JsonlStore.read_after`
reads only the bytes past a cursor (the file's device and inode, the offset
after its last complete line read, and the bytes just before that offset): a
file replaced (another inode), cut short (smaller than the offset) or cut and
written again (other bytes in the last 4 KiB before the offset) is read whole. Every other line must be
a judgment: one that is not is a :class:`~searchtrace.errors.DataError` naming
the file and line, and the file is left as it is for a person to look at.
Locks are POSIX ``flock``: a local file system, not Windows.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from searchtrace.durable import fsync_dir, naming
from searchtrace.errors import DataError
from searchtrace.evals.labels.judgments.records import Judgment, record_from_json
from searchtrace.evals.labels.judgments.store.protocol import Appended

__all__ = ["JsonlStore"]

_CHUNK = 1 << 16
_TAIL = 4096  # bytes before a cursor's offset it keeps (the last lines read, their times to the microsecond), to tell its
# file from one cut and written again


@dataclass(frozen=True)
class _Cursor:
    """Where a read of the file stopped: its identity, the bytes and lines read, and the last bytes read."""

    device: int
    inode: int
    offset: int
    lines: int
    tail: bytes

    def fits(self, fd: int, stat: os.stat_result) -> bool:
        """The file open on ``fd`` is the one this cursor read, grown or not, never cut."""
        return ((stat.st_dev, stat.st_ino) == (self.device, self.inode) and stat.st_size >= self.offset
                and os.pread(fd, len(self.tail), self.offset - len(self.tail)) == self.tail)


class JsonlStore:
    """The judgments file at ``path`` (nothing is opened until a read or an append)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    @property
    def location(self) -> str:
        return str(self.path)

    def append(self, judgments: Sequence[Judgment]) -> None:
        """Append ``judgments`` in one write under an exclusive lock, then fsync: all of them, or none.

        Raises:
            OSError: the write or the fsync failed (a full disk), naming the file; the file is cut
                back to what it held before, under the same lock, so no other writer's lines are lost.
        """
        payload = b"".join(_line(j) for j in judgments)
        if not payload:
            return
        created = not self.path.exists()
        with naming(self.path):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                _cut_torn_tail(fd)
                _append_whole(fd, payload)
            finally:
                os.close(fd)  # releases the lock
        if created:
            fsync_dir(self.path.parent)

    def read(self) -> tuple[Judgment, ...]:
        """Every judgment, in file order; a torn last line is left out."""
        return self.read_after(None).judgments

    def read_after(self, cursor: object | None) -> Appended:
        """The judgments past ``cursor`` (see the module docstring for when it reads the whole file)."""
        try:
            handle = self.path.open("rb")
        except FileNotFoundError:
            return Appended((), None, restarted=True)
        with handle:
            fcntl.flock(handle, fcntl.LOCK_SH)
            stat = os.fstat(handle.fileno())
            resume = cursor if isinstance(cursor, _Cursor) and cursor.fits(handle.fileno(), stat) else None
            start, lines = (resume.offset, resume.lines) if resume else (0, 0)
            handle.seek(start)
            data = handle.read()
            complete = data[: data.rfind(b"\n") + 1]
            end = start + len(complete)
            tail = os.pread(handle.fileno(), min(end, _TAIL), end - min(end, _TAIL))
        judgments = tuple(record_from_json(_decode(self.path, number, raw), str(self.path), number)
                          for number, raw in _complete_lines(complete, lines))
        after = _Cursor(stat.st_dev, stat.st_ino, end, lines + complete.count(b"\n"), tail)
        return Appended(judgments, after, restarted=resume is None)


def _line(judgment: Judgment) -> bytes:
    return (json.dumps(judgment.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def _write(fd: int, payload: bytes) -> None:
    """All of ``payload``: one ``write`` (a regular file takes it whole unless the disk is full)."""
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view):]


def _append_whole(fd: int, payload: bytes) -> None:
    """Write and fsync ``payload`` at the end of the locked file, or cut the file back to where it ended."""
    size = os.fstat(fd).st_size
    try:
        _write(fd, payload)
        os.fsync(fd)
    except BaseException:
        os.ftruncate(fd, size)  # shrinking needs no space; nobody else wrote meanwhile: we hold the lock
        try:
            os.fsync(fd)
        except OSError:
            pass  # the cut stands in the page cache, and readers never use a line without its newline
        raise


def _cut_torn_tail(fd: int) -> None:
    """Cut the file after its last newline, when its last line has none (a writer killed mid-write)."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    end = size
    while end > 0:
        start = max(0, end - _CHUNK)
        newline = os.pread(fd, end - start, start).rfind(b"\n")
        if newline >= 0:
            os.ftruncate(fd, start + newline + 1)
            return
        end = start
    os.ftruncate(fd, 0)


def _complete_lines(data: bytes, before: int = 0) -> Iterator[tuple[int, bytes]]:
    """(1-based number, counting ``before`` lines ahead of ``data``, line) of every non-blank line ending in a newline."""
    lines = data.split(b"\n")
    for number, raw in enumerate(lines[:-1], start=before + 1):  # the last piece has no newline: empty, or torn
        if raw.strip():
            yield number, raw


def _decode(path: Path, number: int, raw: bytes) -> object:
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise DataError(str(path), number, f"damaged line: not UTF-8 ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise DataError(str(path), number, f"damaged line: not JSON ({exc.msg} at column {exc.colno})") from None
