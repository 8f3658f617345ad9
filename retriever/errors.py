"""One family of domain errors, each with a stable code.

The search boundary turns them into ``{"error": {"code", "message", "field"}}``.
"""

from __future__ import annotations

import enum


class ErrorCode(str, enum.Enum):
    VALIDATION_ERROR = "VALIDATION_ERROR"
    NOT_FOUND = "NOT_FOUND"
    BACKEND_UNAVAILABLE = "BACKEND_UNAVAILABLE"
    SEARCH_ERROR = "SEARCH_ERROR"


class SearchtraceError(Exception):
    """Base of every error this project raises on purpose."""

    code: ErrorCode = ErrorCode.SEARCH_ERROR

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def to_dict(self) -> dict:
        return {"error": {"code": self.code.value, "message": self.message, "field": self.field}}


class ValidationError(SearchtraceError):
    code = ErrorCode.VALIDATION_ERROR


class NotFoundError(SearchtraceError):
    code = ErrorCode.NOT_FOUND


class BackendUnavailable(SearchtraceError):
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
