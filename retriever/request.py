"""The search request: one model, validated completely at the boundary."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, date, datetime
from typing import Any, Mapping

import pydantic
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

from searchtrace.errors import ValidationError
from searchtrace.names import Mode

MAX_QUERY_BYTES = 8192
MAX_TOP_K = 50
MAX_CANDIDATES = 500
MAX_DEPTH = 3

_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Zs", "Zl", "Zp"})
"""Unicode categories that show nothing: controls, format characters (zero-width and bidi marks), spaces."""
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")  # letters and symbols drawn as blanks
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?([Zz]|[+-]\d{2}:?\d{2})")
DATE_FORMATS = "an ISO 8601 date (2025-01-31) or date-time with a zone (2025-01-31T08:00:00Z)"


def visible(text: str) -> str:
    """``text`` without control, format (zero-width, bidi), space and blank-drawn characters."""
    return "".join(ch for ch in text if unicodedata.category(ch) not in _INVISIBLE and ch not in _FILLERS)


def parse_instant(value: object) -> datetime:
    """An ISO 8601 date (midnight UTC) or date-time with a zone, as an aware datetime.

    Only strings in those two forms (or an aware ``datetime`` / a ``date`` from
    Python): a number or a bare year would be read as seconds since 1970.

    Raises:
        ValueError: anything else, saying what is accepted.
    """
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError(f"must be {DATE_FORMATS}; got a date-time without a zone")
        return value
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if not isinstance(value, str) or not (_ISO_DATE.fullmatch(value) or _ISO_DATETIME.fullmatch(value)):
        shown = repr(value) if isinstance(value, str) else f"{type(value).__name__} {value!r:.40}"
        raise ValueError(f"must be {DATE_FORMATS}, got {shown}")
    try:
        parsed = datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(f"must be {DATE_FORMATS}, got {value!r} ({exc})") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


class SearchRequest(BaseModel):
    """A validated search request. Unknown fields are rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    query: StrictStr
    top_k: StrictInt = Field(5, ge=1, le=MAX_TOP_K)
    candidates: StrictInt = Field(100, le=MAX_CANDIDATES)
    min_relevance: StrictFloat | StrictInt | None = Field(None, ge=0, le=1)
    mode: Mode | None = None
    depth: StrictInt | None = Field(None, ge=0, le=MAX_DEPTH)
    collection: StrictStr | None = None
    tags_any: list[StrictStr] | None = None
    tags_all: list[StrictStr] | None = None
    doc_ids: list[StrictStr] | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    gap_cutoff: StrictFloat | StrictInt | None = Field(None, gt=0, le=1)
    debug: StrictBool = False

    @pydantic.field_validator("created_after", "created_before", mode="before")
    @classmethod
    def _instant(cls, value: object) -> datetime | None:
        return None if value is None else parse_instant(value)

    @pydantic.field_validator("query")
    @classmethod
    def _query_size(cls, value: str) -> str:
        if not visible(value):
            raise ValueError("query must not be empty, only whitespace or only invisible characters "
                             "(controls, zero-width or bidi marks)")
        size = len(value.encode("utf-8", errors="surrogatepass"))
        if size > MAX_QUERY_BYTES:
            raise ValueError(f"query is {size} UTF-8 bytes; the maximum is {MAX_QUERY_BYTES}")
        return value

    @pydantic.model_validator(mode="after")
    def _candidates_cover_top_k(self) -> SearchRequest:
        if self.candidates < self.top_k:
            raise ValueError(
                f"candidates ({self.candidates}) must be between top_k ({self.top_k}) and {MAX_CANDIDATES}"
            )
        return self


def _field_of(error: Mapping[str, Any]) -> str | None:
    loc = [str(p) for p in error.get("loc", ()) if p != "__root__"]
    if not loc:
        return "candidates" if "candidates" in error.get("msg", "") else None
    return ".".join(loc)


def validate_request(raw: Any) -> SearchRequest:
    """Validate a raw request (a mapping, or a SearchRequest).

    Raises:
        ValidationError: naming the offending field and what is allowed.
    """
    if isinstance(raw, SearchRequest):
        return raw
    if not isinstance(raw, Mapping):
        raise ValidationError(f"request must be a JSON object, got {type(raw).__name__}")
    try:
        return SearchRequest.model_validate(dict(raw))
    except pydantic.ValidationError as exc:
        errors = exc.errors(include_url=False)
        first = errors[0]
        field = _field_of(first)
        parts = []
        for err in errors:
            where = _field_of(err) or "request"
            msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
            if err.get("type") == "extra_forbidden":
                msg = f"unknown field; allowed fields: {', '.join(SearchRequest.model_fields)}"
            elif where == "mode":
                msg = f"{msg}; allowed: {', '.join(m.value for m in Mode)}"
            parts.append(f"{where}: {msg}")
        raise ValidationError("; ".join(parts), field=field) from None
    except (TypeError, ValueError, RecursionError) as exc:  # pragma: no cover - defensive
        raise ValidationError(f"request could not be validated: {exc}") from None
