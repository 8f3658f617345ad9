"""Notices: library code logs the line, the command line shows it on stderr exactly as written, once."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from searchtrace import notices

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
