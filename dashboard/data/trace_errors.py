"""What failed in a trace: each span's error message, the exceptions it recorded, and where the failure began."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from searchtrace.traces import SpanRecord
from searchtrace.traces import vocabulary as v

__all__ = ["EXCEPTION_COLUMNS", "TraceError", "error_message", "exceptions", "first_error"]

EXCEPTION_COLUMNS = ["span_id", "name", "type", "message", "stacktrace"]
ERROR = "ERROR"  # a span's status code name when it ended in error


@dataclass(frozen=True)
class TraceError:
    """Where a trace's first error began: the span, what it said (its status message, else its exception's),
    how many spans ended in error, and whether the trace failed (its root did) or went on without the span
    (a degraded stage)."""

    span_id: str
    name: str
    message: str
    spans_in_error: int
    failed: bool


def _exception_rows(span: SpanRecord) -> list[dict[str, str]]:
    return [{"span_id": span.span_id, "name": span.name, "type": str(e.attributes.get(v.EXCEPTION_TYPE, "")),
             "message": str(e.attributes.get(v.EXCEPTION_MESSAGE, "")),
             "stacktrace": str(e.attributes.get(v.EXCEPTION_STACKTRACE, ""))}
            for e in span.events if e.name == v.EXCEPTION_EVENT]


def exceptions(spans: Sequence[SpanRecord]) -> pd.DataFrame:
    """One row per exception event of the spans, in their order: :data:`EXCEPTION_COLUMNS`."""
    return pd.DataFrame([row for s in spans for row in _exception_rows(s)], columns=EXCEPTION_COLUMNS)


def error_message(span: SpanRecord) -> str:
    """What a span in error says: its status message, else its first exception's type and message ("" if none)."""
    if span.status_message:
        return span.status_message
    rows = _exception_rows(span)
    return f"{rows[0]['type']}: {rows[0]['message']}".strip(": ") if rows else ""


def first_error(spans: Sequence[SpanRecord]) -> TraceError | None:
    """The span where the failure began, or None when no span ended in error.

    An error travels outward (a stage's exception fails the search, then the
    server span), so of the spans in error the one that ended first is where it
    began; it says the most, and the others repeat it.
    """
    failed = [s for s in spans if s.status == ERROR]
    if not failed:
        return None
    origin = min(failed, key=lambda s: (s.end_ns, -s.start_ns))
    ids = {s.span_id for s in spans}
    root_failed = any(s.parent_id not in ids for s in failed)
    return TraceError(origin.span_id, origin.name, error_message(origin), len(failed), root_failed)
