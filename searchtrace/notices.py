"""Lines for the person at the terminal, from library code: logged, shown by the command line as written.

Library code prints nothing. What a user should read while a command runs (``warning: ... is
damaged; rebuilding it``, ``waiting for another process ...``) is logged on the module's own
logger with :func:`tell`, which marks the record a notice; the command line's handler
(:func:`configure`) writes a notice as its message alone on stderr, any other record as
``LEVEL message``. An application that configures logging itself gets notices as warnings (or
errors) in its own format; with nothing configured, Python's last-resort handler prints the
message alone on stderr, as the command line does.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

__all__ = ["configure", "is_notice", "report_fatal_signals", "tell"]

_MARK = "searchtrace_notice"
"""The attribute :func:`tell` sets on a record."""
_FORMAT = "%(levelname)s %(message)s"
"""How the command line shows a record that is not a notice."""


def tell(log: logging.Logger, message: str, level: int = logging.WARNING) -> None:
    """Log ``message``, the whole line the user reads (``"warning: ..."``), as a notice."""
    log.log(level, message, extra={_MARK: True})


def is_notice(record: logging.LogRecord) -> bool:
    """The record was logged with :func:`tell`."""
    return bool(getattr(record, _MARK, False))


class _Lines(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return record.getMessage() if is_notice(record) else super().format(record)


class _Stderr(logging.StreamHandler):
    """Writes to ``sys.stderr`` as it is when a record comes (a redirected or captured stream included)."""

    def __init__(self, notices_only: bool) -> None:
        super().__init__()
        self.setFormatter(_Lines(_FORMAT))
        if notices_only:
            self.addFilter(is_notice)

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:
        pass  # always the current sys.stderr


def configure(level: int) -> None:
    """The command line's logging: notices as their message alone, other records as ``LEVEL message``, on stderr.

    As :func:`logging.basicConfig`, other records are left to the handlers already configured (an
    application embedding the command line, a test runner's capture), and ``level`` is set only when
    there are none; notices are shown on stderr either way, once (calling this again replaces its handler).
    """
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _Stderr)]:
        root.removeHandler(old)
    handler = _Stderr(notices_only=bool(root.handlers))
    if not root.handlers:
        root.setLevel(level)
    root.addHandler(handler)


def report_fatal_signals() -> None:
    """A process killed by SIGBUS (a memory map meeting a full disk), SIGSEGV or SIGABRT says so on stderr.

    :mod:`faulthandler` writes ``Fatal Python error: Bus error`` and the Python stack from C code safe
    inside a signal handler, then lets the signal kill the process (exit 135 stays the truth). A Python
    handler cannot: it runs only between bytecodes, and the faulting instruction would fault again first,
    forever. Nothing is done where faulthandler is already on (a test runner) or stderr has no descriptor.
    """
    import faulthandler

    if faulthandler.is_enabled():
        return
    try:
        faulthandler.enable()
    except (AttributeError, RuntimeError, ValueError, OSError):  # sys.stderr is None, or not a file
        pass
