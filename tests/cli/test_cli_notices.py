"""The command line shows a library's notice on stderr exactly as the library wrote it."""

from __future__ import annotations

import signal
import time

import pytest

from searchtrace.cli import main
from searchtrace.retriever.index.locks import FileLock


def test_the_command_line_shows_a_library_notice_on_stderr(tmp_path, capsys):
    assert main(["traces", "list", "--home", str(tmp_path)]) in (0, 2)  # any command: it configures logging
    capsys.readouterr()
    lock_file = tmp_path / "held.lock"
    holder = FileLock(lock_file, "holding it")
    assert holder.try_acquire()
    waiter = FileLock(lock_file, "building the index", notice_after_s=0.0)
    started = time.monotonic()
    try:
        with pytest.raises(TimeoutError):
            _acquire_within(waiter, 0.3)
    finally:
        holder.release()
    assert time.monotonic() - started < 5
    assert capsys.readouterr().err == f"waiting for another process building the index ({lock_file})\n"


def _acquire_within(lock: FileLock, seconds: float) -> None:
    """Enter ``lock``, giving up after ``seconds`` (a timer signal: the notice comes before the first sleep)."""
    def give_up(signum: int, frame: object) -> None:
        raise TimeoutError

    previous = signal.signal(signal.SIGALRM, give_up)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        with lock:
            pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
