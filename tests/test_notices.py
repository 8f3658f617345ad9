"""Notices: library code logs the line, the command line shows it on stderr exactly as written, once."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from searchtrace import notices
from searchtrace.cli import main
from searchtrace.retriever.index.locks import FileLock

log = logging.getLogger("searchtrace.tests.notices")


@contextmanager
def bare_root() -> Iterator[logging.Logger]:
    """The root logger as in a fresh process, no handlers; the test runner's put back (in place: it removes
    its own when the test ends)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    root.handlers.clear()
    try:
        yield root
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def test_a_notice_is_its_message_alone_and_other_records_keep_their_level(capsys):
    with bare_root():
        notices.configure(logging.WARNING)
        notices.tell(log, "warning: the index is damaged; rebuilding it")
        notices.tell(log, "error: worker 1 exited with code -9; stopping the other workers", logging.ERROR)
        log.warning("a plain warning")
        log.info("not shown at WARNING")
    assert capsys.readouterr().err == ("warning: the index is damaged; rebuilding it\n"
                                       "error: worker 1 exited with code -9; stopping the other workers\n"
                                       "WARNING a plain warning\n")


def test_configuring_again_replaces_the_handler_and_sets_the_level(capsys):
    with bare_root() as root:
        notices.configure(logging.WARNING)
        notices.configure(logging.INFO)
        notices.tell(log, "waiting for another process")
        log.info("shown at INFO")
        assert len(root.handlers) == 1
    assert capsys.readouterr().err == "waiting for another process\nINFO shown at INFO\n"


def test_beside_handlers_already_there_only_notices_are_added(capsys, caplog):
    with bare_root() as root:
        root.addHandler(caplog.handler)
        notices.configure(logging.INFO)
        notices.tell(log, "warning: traces are off")
        log.warning("left to the handler already there")
        assert root.level == logging.WARNING  # as logging.basicConfig: the level left alone
    assert capsys.readouterr().err == "warning: traces are off\n"
    assert [r.getMessage() for r in caplog.records] == ["warning: traces are off", "left to the handler already there"]


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
    """Enter ``lock`` on a thread-free timer: the wait notice comes before the first sleep."""
    import signal

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
