"""The search request: one model, validated completely at the boundary.

Plain Python: the checks below are the whole validation (no schema library
to import on every command-line search), and :func:`request_schema` is the
JSON schema that the served API and the MCP tools publish, written beside the
checks so the two cannot drift apart.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from searchtrace.errors import ValidationError
from searchtrace.names import Mode
from searchtrace.typedreads import FLAG, INTEGER, REAL, STRING, Kind, read

MAX_QUERY_CHARS = 8192
"""The longest query, in characters (code points, as JSON Schema's ``maxLength`` counts them)."""
MAX_LIST = 1000
"""The most items of ``doc_ids``, ``tags_any`` or ``tags_all``, on every transport."""
DEFAULT_TOP_K = 5
"""Results a search returns unless asked otherwise (the results shown)."""
DEFAULT_CANDIDATES = 100
"""Candidates each search stage keeps unless asked otherwise."""
MAX_CANDIDATES = 500
"""The most candidates a stage keeps, hence the deepest ranking a search can score."""
MAX_TOP_K = MAX_CANDIDATES
"""The most results one response carries: as many as a stage keeps, so a served search answers as deep
as an eval scores (``GET /v1/stats`` states it as ``maxTopK``)."""
FORMER_MAX_TOP_K = 50
"""The limit before :data:`MAX_TOP_K`: what a server that does not state ``maxTopK`` accepts, and the
deepest an ``eval --target`` run scored before ``run.json`` recorded its ``scored_depth``."""
MAX_TOP_K_FIELD = "maxTopK"
"""The key under which ``GET /v1/stats`` states :data:`MAX_TOP_K`."""
MAX_DEPTH = 3

_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Zs", "Zl", "Zp"})
"""Unicode categories that show nothing: controls, format characters (zero-width and bidi marks), spaces."""
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")  # letters and symbols drawn as blanks
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})")
DATE_FORMATS = "an ISO 8601 date (2025-01-31) or date-time with a zone (2025-01-31T08:00:00Z)"


def _blank(ch: str) -> bool:
    """A character that shows nothing: a control, format (zero-width, bidi), space or blank-drawn one of the
    Basic Multilingual Plane (beyond it every character counts as shown, as the schema's pattern says)."""
    return ord(ch) <= 0xFFFF and (unicodedata.category(ch) in _INVISIBLE or ch in _FILLERS)


def visible(text: str) -> str:
    """``text`` without the characters that show nothing (:func:`_blank`)."""
    return "".join(ch for ch in text if not _blank(ch))


@functools.cache
def shown_pattern() -> str:
    """A regular expression (ECMA-262 and Python alike) matching one character that shows something: the query
    schema's ``pattern``, so a query the schema allows is one the checks accept (tested char by char). Lone
    surrogates are left out of the class (JSON Schema tools cannot read a surrogate range, and no text holds
    one): a query of them alone is still refused."""
    ranges, start = [], None
    for code in range(0x10000 + 1):
        blank = code <= 0xFFFF and _blank(chr(code)) and not 0xD800 <= code <= 0xDFFF
        if blank and start is None:
            start = code
        elif not blank and start is not None:
            ranges.append(f"\\u{start:04x}" if start == code - 1 else f"\\u{start:04x}-\\u{code - 1:04x}")
            start = None
    return f"[^{''.join(ranges)}]"


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
        raise ValueError(f"must be {DATE_FORMATS}, got {repr(value) if isinstance(value, str) else _shown(value)}")
    try:
        parsed = datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(f"must be {DATE_FORMATS}, got {value!r} ({exc})") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


class _Invalid(ValueError):
    """One field's value is not allowed; ``where`` is its path below the field (a list's index)."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(message)
        self.where = where


def _integer(low: int | None, high: int) -> Callable[[object], int]:
    def check(value: object) -> int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # 5.0 is JSON Schema's integer 5
        value = read(value, INTEGER, "", _refuse)
        if (low is not None and value < low) or value > high:
            raise _Invalid(f"must be between {low} and {high}, got {value}" if low is not None
                           else f"must be at most {high}, got {value}")
        return value
    return check


def _fraction(*, zero: bool) -> Callable[[object], float]:
    def check(value: object) -> float:
        value = read(value, REAL, "", _refuse)
        ok = (0 <= value <= 1) if zero else (0 < value <= 1)  # False for NaN
        if not ok:
            raise _Invalid(f"must be {'between 0 and 1' if zero else 'above 0 and at most 1'}, got {value}")
        return value
    return check


def _refuse(where: str, expected: str, got: object) -> _Invalid:
    return _Invalid(f"must be {expected}, got {_shown(got)}", where)


def _string(value: object) -> str:
    return read(value, STRING, "", _refuse)


_SEQUENCE: Kind[list[Any]] = Kind("a list of strings", lambda v: isinstance(v, (list, tuple)), list)


def _strings(value: object) -> list[str]:
    items = read(value, _SEQUENCE, "", _refuse)
    if len(items) > MAX_LIST:
        raise _Invalid(f"has {len(items)} items; the most is {MAX_LIST}")
    return [read(item, STRING, str(i), _refuse) for i, item in enumerate(items)]


def _boolean(value: object) -> bool:
    return read(value, FLAG, "", _refuse)


def _mode(value: object) -> Mode:
    if isinstance(value, Mode):
        return value
    if isinstance(value, str):
        for mode in Mode:
            if mode.value == value:
                return mode
    raise _Invalid(f"{_shown(value)} is not a mode; allowed: {', '.join(m.value for m in Mode)}")


def _query(value: object) -> str:
    text = _string(value)
    if not visible(text):
        raise _Invalid("query must not be empty, only whitespace or only invisible characters "
                       "(controls, zero-width or bidi marks)")
    if len(text) > MAX_QUERY_CHARS:
        raise _Invalid(f"query is {len(text)} characters; the maximum is {MAX_QUERY_CHARS}")
    return text


def valid_query(raw: object) -> str | None:
    """The query of a raw request whose ``query`` field is valid (whatever its other fields), else None: what
    the trace of a refused request still records (a bad ``top_k`` leaves a good query to title it)."""
    if not isinstance(raw, Mapping) or "query" not in raw:
        return None
    try:
        return _query(raw["query"])
    except _Invalid:
        return None


def _instant(value: object) -> datetime:
    try:
        return parse_instant(value)
    except ValueError as exc:
        raise _Invalid(str(exc)) from None


def _nullable(schema: Mapping[str, Any]) -> bool:
    """The field's schema admits ``null`` (its default is "none"); elsewhere null is refused by name."""
    kind = schema.get("type")
    return isinstance(kind, list) and "null" in kind


def _shown(value: object) -> str:
    """A value in a message: its type and the start of its repr."""
    return f"{type(value).__name__} {value!r:.40}"


_NUMBER = ["number", "integer"]
_INSTANT = [{"type": "string", "format": "date"}, {"type": "string", "format": "date-time"}, {"type": "null"}]
_FIELDS: dict[str, tuple[Callable[[object], Any], dict[str, Any]]] = {
    "query": (_query, {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS,
                       "description": f"what to search for (at most {MAX_QUERY_CHARS} characters, one of them "
                                      "shown: not only spaces, controls, zero-width or bidi marks)"}),
    "top_k": (_integer(1, MAX_TOP_K), {"type": "integer", "minimum": 1, "maximum": MAX_TOP_K,
                                       "description": "results to return"}),
    "candidates": (_integer(1, MAX_CANDIDATES), {
        "type": "integer", "minimum": 1, "maximum": MAX_CANDIDATES,
        "description": "candidates each search stage keeps (raised to top_k when fewer)"}),
    "min_relevance": (_fraction(zero=True), {"type": [*_NUMBER, "null"], "minimum": 0, "maximum": 1,
                                             "description": "drop results below this calibrated relevance"}),
    "mode": (_mode, {"type": ["string", "null"], "enum": [*(m.value for m in Mode), None],
                     "description": "fast: vectors and keywords only; graph: plus the knowledge graph "
                                    "(default: the dataset's)"}),
    "depth": (_integer(0, MAX_DEPTH), {"type": ["integer", "null"], "minimum": 0, "maximum": MAX_DEPTH,
                                       "description": "graph hops from the query's entities"}),
    "collection": (_string, {"type": ["string", "null"], "description": "only this collection"}),
    "tags_any": (_strings, {"type": ["array", "null"], "items": {"type": "string"}, "maxItems": MAX_LIST,
                            "description": "only documents with at least one of these tags"}),
    "tags_all": (_strings, {"type": ["array", "null"], "items": {"type": "string"}, "maxItems": MAX_LIST,
                            "description": "only documents with all of these tags"}),
    "doc_ids": (_strings, {"type": ["array", "null"], "items": {"type": "string"}, "maxItems": MAX_LIST,
                           "description": "only these documents"}),
    "created_after": (_instant, {"type": ["string", "null"], "anyOf": _INSTANT,
                                 "description": f"only documents created at or after this: {DATE_FORMATS}"}),
    "created_before": (_instant, {"type": ["string", "null"], "anyOf": _INSTANT,
                                  "description": f"only documents created before this: {DATE_FORMATS}"}),
    "gap_cutoff": (_fraction(zero=False), {"type": [*_NUMBER, "null"], "exclusiveMinimum": 0, "maximum": 1,
                                           "description": "cut the results at the first relative score drop "
                                                          "larger than this"}),
    "debug": (_boolean, {"type": "boolean", "description": "include every stage's candidates"}),
}
"""Each field's check (value in, normalised value out, :class:`_Invalid` when not allowed) and JSON schema.

A field's default is :class:`SearchRequest`'s own, which :func:`request_schema` copies in."""


@dataclass(frozen=True)
class SearchRequest:
    """A validated search request; building one checks every field (unknown fields do not exist).

    Raises:
        ValidationError: from the constructor, naming every offending field and what is allowed.
    """

    query: str
    top_k: int = DEFAULT_TOP_K
    candidates: int = DEFAULT_CANDIDATES
    min_relevance: float | None = None
    mode: Mode | None = None
    depth: int | None = None
    collection: str | None = None
    tags_any: list[str] | None = None
    tags_all: list[str] | None = None
    doc_ids: list[str] | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    gap_cutoff: float | None = None
    debug: bool = False

    def __post_init__(self) -> None:
        problems: list[tuple[str, str]] = []
        for name, (check, schema) in _FIELDS.items():
            value = getattr(self, name)
            if value is None and _nullable(schema):
                continue  # null is the field's documented default ("none")
            try:
                object.__setattr__(self, name, check(value))
            except _Invalid as exc:
                problems.append((f"{name}.{exc.where}" if exc.where else name, str(exc)))
        if not problems and self.candidates < self.top_k:
            object.__setattr__(self, "candidates", self.top_k)  # every stage keeps at least the results shown
        if problems:
            raise ValidationError("; ".join(f"{where}: {msg}" for where, msg in problems), field=problems[0][0])


FIELDS = tuple(f.name for f in dataclasses.fields(SearchRequest))
"""The request's fields, in order."""
assert FIELDS == tuple(_FIELDS), "every field of SearchRequest has a check and a schema"


def request_schema() -> dict[str, Any]:
    """The request's JSON schema (limits included; unknown fields not allowed)."""
    defaults = {f.name: f.default for f in dataclasses.fields(SearchRequest) if f.default is not dataclasses.MISSING}

    def with_default(name: str, schema: Mapping[str, Any]) -> dict[str, Any]:
        if name not in defaults:
            return dict(schema)
        head = {k: x for k, x in schema.items() if k != "description"}
        return {**head, "default": defaults[name], "description": schema["description"]}

    properties = {name: with_default(name, schema) for name, (_, schema) in _FIELDS.items()}
    properties["query"]["pattern"] = shown_pattern()
    return {"type": "object", "description": "A search request.", "additionalProperties": False,
            "required": ["query"], "properties": properties}


def validate_request(raw: Any) -> SearchRequest:
    """Validate a raw request (a mapping, or a SearchRequest).

    Raises:
        ValidationError: naming the offending field and what is allowed.
    """
    if isinstance(raw, SearchRequest):
        return raw
    if not isinstance(raw, Mapping):
        raise ValidationError(f"request must be a JSON object, got {type(raw).__name__}")
    unknown = [str(k) for k in raw if k not in _FIELDS]
    if unknown:
        raise ValidationError(f"{unknown[0]}: unknown field; allowed fields: {', '.join(FIELDS)}", field=unknown[0])
    if "query" not in raw:
        raise ValidationError("query: field required", field="query")
    return SearchRequest(**raw)
