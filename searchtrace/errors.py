"""One family of domain errors, each with a stable code, and the process exit codes.

The search boundary turns an error into ``{"error": {"code", "message",
"field"}}``; the command line turns it into one line on stderr and an
:class:`ExitCode`.
"""

from __future__ import annotations

import enum

__all__ = [
    "BackendUnavailable",
    "ConfigError",
    "DataError",
    "ErrorCode",
    "ErrorDict",
    "ExitCode",
    "NotFoundError",
    "Overloaded",
    "SearchTimeout",
    "SearchtraceError",
    "ValidationError",
]


class ErrorCode(str, enum.Enum):
    """The stable ``code`` of an error object."""

    VALIDATION_ERROR = "VALIDATION_ERROR"
    NOT_FOUND = "NOT_FOUND"
    BACKEND_UNAVAILABLE = "BACKEND_UNAVAILABLE"
    SEARCH_ERROR = "SEARCH_ERROR"
    TIMEOUT = "TIMEOUT"
    OVERLOADED = "OVERLOADED"
    PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
    UNAUTHORIZED = "UNAUTHORIZED"


class ExitCode(enum.IntEnum):
    """Exit status of every ``searchtrace`` command.

    ``FAILURE`` covers a command that ran but failed (a search error, an eval
    with failed queries, a regression found by ``gate``, a full disk, an
    unexpected error); ``INVALID`` covers input the command could not use (bad
    arguments, a request that fails validation, malformed data, a missing run
    folder, trace or file, runs that cannot be compared, a home or output path
    that is not a writable folder). The same situation has the same code in
    every command (the README lists them).
    """

    OK = 0
    FAILURE = 1
    INVALID = 2
    INTERRUPTED = 130


ErrorDict = dict[str, dict[str, str | None]]
"""``{"error": {"code": ..., "message": ..., "field": ...}}``."""


class SearchtraceError(Exception):
    """Base of every error this project raises on purpose.

    Args:
        message: what was wrong, naming the value and what is allowed.
        field: the request field, setting or argument at fault, if one is.
    """

    code: ErrorCode = ErrorCode.SEARCH_ERROR

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    @property
    def exit_code(self) -> ExitCode:
        """``INVALID`` for bad input (a validation error, something named that does not exist), else ``FAILURE``."""
        return ExitCode.INVALID if self.code in (ErrorCode.VALIDATION_ERROR, ErrorCode.NOT_FOUND) else ExitCode.FAILURE

    def to_dict(self) -> ErrorDict:
        """The error object of the response contract."""
        return {"error": {"code": self.code.value, "message": self.message, "field": self.field}}


class ValidationError(SearchtraceError):
    """A request, argument or setting that is not allowed."""

    code = ErrorCode.VALIDATION_ERROR


class NotFoundError(SearchtraceError):
    """An id, run or file that does not exist."""

    code = ErrorCode.NOT_FOUND


class BackendUnavailable(SearchtraceError):
    """A vector store or graph server that cannot be reached."""

    code = ErrorCode.BACKEND_UNAVAILABLE


class DataError(SearchtraceError):
    """Malformed input data; the message names the file and line."""

    code = ErrorCode.VALIDATION_ERROR

    def __init__(self, path: str, line: int | None, message: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")
        self.path = str(path)
        self.line = line


class ConfigError(ValidationError, ValueError):
    """A bad setting (an environment variable, a flag, a settings file); names the setting."""


class SearchTimeout(SearchtraceError):
    """A search that did not finish within the served request's time limit."""

    code = ErrorCode.TIMEOUT


class Overloaded(SearchtraceError):
    """A server at its bound of searches in flight: try again shortly."""

    code = ErrorCode.OVERLOADED
