"""Advisory file locks between processes (``fcntl.flock``): released by the kernel when a holder dies."""

from __future__ import annotations

import fcntl
import logging
import os
import time
from pathlib import Path
from types import TracebackType

from searchtrace.notices import tell

__all__ = ["FileLock"]

log = logging.getLogger(__name__)


class FileLock:
    """An exclusive lock on a file, held between ``__enter__`` and ``__exit__``.

    Args:
        path: the lock file (created if missing, never deleted: deleting a lock
            file another process waits on would split the lock in two).
        what: what the lock guards, for the notice given while waiting.
        notice_after_s: tell that we wait (a line on stderr from the command line) once this long has passed.
    """

    def __init__(self, path: Path, what: str, notice_after_s: float = 1.0) -> None:
        self.path, self.what, self.notice_after_s = path, what, notice_after_s
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        """Take the lock if it is free; True when taken."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def __enter__(self) -> FileLock:
        started, noticed = time.monotonic(), False
        while not self.try_acquire():
            if not noticed and time.monotonic() - started >= self.notice_after_s:
                tell(log, f"waiting for another process {self.what} ({self.path})")
                noticed = True
            time.sleep(0.1)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()

    def release(self) -> None:
        """Give the lock back (closing the descriptor releases it)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
