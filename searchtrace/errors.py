"""One family of domain errors, each with a stable code, and the process exit codes.

An error travels as an exception from where it is found (the request's
checks, a backend, a server's limits) to an edge: the HTTP API, the MCP tools,
``search --json`` and ``eval --target``'s journal each turn it into
``{"error": {"code", "message", "field"}}`` with :func:`error_object`, the one
place that object is written; :func:`error_from_object` reads one back (a
served searchtrace's answer) as the exception of its code. The command line
turns an error into one line on stderr and an :class:`ExitCode`.
"""

from __future__ import annotations

import enum
import errno

__all__ = [
    "BackendUnavailable",
    "PayloadTooLarge",
    "SearchFailed",
    "Unauthorized",
    "ERROR_SCHEMA",
    "error_from_object",
    "error_object",
    "os_error_message",
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
    PIPE_CLOSED = 141
    """The reader of standard output went away (``| head``): 128 + SIGPIPE, what a shell reports of any
    other tool the closed pipe stopped, so ``set -o pipefail`` sees it, and a ``gate`` whose verdict was
    cut off never reads as a pass."""


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
    """A server at its bound of searches in flight: try again shortly.

    Args:
        message: as every error's.
        field: as every error's.
        retry_after_s: how long the server asked to be left alone (an HTTP ``Retry-After``), when it said.
    """

    code = ErrorCode.OVERLOADED

    def __init__(self, message: str, *, field: str | None = None, retry_after_s: float | None = None) -> None:
        super().__init__(message, field=field)
        self.retry_after_s = retry_after_s


class SearchFailed(SearchtraceError):
    """A search that failed for a reason no other error names (a bug, an unexpected backend failure)."""

    code = ErrorCode.SEARCH_ERROR


class PayloadTooLarge(SearchtraceError):
    """A request, or the documents it asks for, larger than the server answers."""

    code = ErrorCode.PAYLOAD_TOO_LARGE


class Unauthorized(SearchtraceError):
    """A request off loopback without the server's API key."""

    code = ErrorCode.UNAUTHORIZED


_BY_CODE: dict[ErrorCode, type[SearchtraceError]] = {
    ErrorCode.VALIDATION_ERROR: ValidationError,
    ErrorCode.NOT_FOUND: NotFoundError,
    ErrorCode.BACKEND_UNAVAILABLE: BackendUnavailable,
    ErrorCode.SEARCH_ERROR: SearchFailed,
    ErrorCode.TIMEOUT: SearchTimeout,
    ErrorCode.OVERLOADED: Overloaded,
    ErrorCode.PAYLOAD_TOO_LARGE: PayloadTooLarge,
    ErrorCode.UNAUTHORIZED: Unauthorized,
}


ERROR_SCHEMA: dict[str, object] = {
    "type": "object", "required": ["error"], "additionalProperties": False,
    "properties": {"error": {
        "type": "object", "required": ["code", "message", "field"], "additionalProperties": False,
        "properties": {"code": {"type": "string", "enum": [c.value for c in ErrorCode]},
                       "message": {"type": "string"}, "field": {"type": ["string", "null"]}}}},
}
"""The JSON schema of :func:`error_object` (the served API declares it for every error status)."""


def error_object(exc: SearchtraceError) -> ErrorDict:
    """``{"error": {"code", "message", "field"}}``: the error object of the response contract, written only here."""
    return {"error": {"code": exc.code.value, "message": exc.message, "field": exc.field}}


def error_from_object(payload: object) -> SearchtraceError | None:
    """The exception an error object stands for (an unknown code: :class:`SearchFailed`); None when it is not one."""
    if not isinstance(payload, dict) or not isinstance(payload.get("error"), dict):
        return None
    body = payload["error"]
    code, message, field = body.get("code"), body.get("message"), body.get("field")
    known = {c.value: c for c in ErrorCode}
    cls = _BY_CODE[known[code]] if code in known else SearchFailed
    return cls(str(message) if message is not None else str(code or "unknown error"),
               field=field if isinstance(field, str) else None)


def os_error_message(exc: OSError, command: str | None = None) -> str:
    """One line for an operating-system error: what failed, on which file, and what to do.

    Args:
        exc: the error.
        command: the command that met it (``"judge import"``), named in what to do; only
            ``eval`` is told it resumes where it stopped. A note the command added to ``exc``
            (``"judge import wrote nothing"``) follows the file's name.
    """
    where = f" ({exc.filename})" if exc.filename else ""
    where += "".join(f", {note}" for note in getattr(exc, "__notes__", ()))  # what the command says of it
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        if command in (None, "eval"):
            return (f"{reason}{where}: free some space and run the same command again "
                    "(an interrupted eval resumes where it stopped)")
        return f"{reason}{where}: free some space and run `searchtrace {command}` again"
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return f"{reason}{where}: choose a writable place (--home, --out) or fix its permissions"
    if exc.errno in (errno.ENOTDIR, errno.EEXIST, errno.EISDIR):
        return f"{reason}{where}: a file stands where a folder belongs (or the reverse); choose another path"
    return f"{reason}{where}"
