"""Stored traces as tables: a filtered list, and one trace as a span waterfall."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from searchtrace.dashboard.data.tracestore import trace_store
from searchtrace.traces import SpanRecord, TraceDetail, TraceFilter

__all__ = ["LIST_COLUMNS", "Waterfall", "count_traces", "list_traces", "waterfall"]

LIST_COLUMNS = ("trace_id", "start", "duration_ms", "mode", "query", "run_id", "query_id", "best_score",
                "no_confident", "bands", "degraded", "n_results", "error_code", "n_spans")
SHOWN_ITEMS = 20  # array attributes are cut to this many items for display


def _filter(limit: int | None = 200, offset: int = 0, **fields: Any) -> TraceFilter:
    return TraceFilter(**{k: v for k, v in fields.items() if v not in (None, "")}, limit=limit, offset=offset)


def list_traces(home: str | Path, *, mode: str | None = None, band: str | None = None,
                no_confident: bool | None = None, degraded: bool | str | None = None,
                min_latency_ms: float | None = None, run_id: str | None = None, query_text: str | None = None,
                limit: int = 200, offset: int = 0) -> pd.DataFrame:
    """Traces matching every filter given, newest first, at most ``limit`` (columns :data:`LIST_COLUMNS`).

    Raises:
        ValueError: an unknown band or a negative limit or offset.
    """
    flt = _filter(limit, offset, mode=mode, band=band, no_confident=no_confident, degraded=degraded,
                  min_latency_ms=min_latency_ms, run_id=run_id, query_text=query_text)
    store = trace_store(home)
    rows = [s.to_dict() for s in store.list_traces(flt)] if store else []
    frame = pd.DataFrame(rows, columns=[*LIST_COLUMNS, "start_ns"])
    frame["start"] = pd.to_datetime(frame["start_ns"], unit="ns", utc=True)
    for column in ("bands", "degraded"):
        frame[column] = frame[column].map(lambda x: ",".join(x))
    return frame[list(LIST_COLUMNS)]


def count_traces(home: str | Path, **filters: Any) -> int:
    """How many traces match the filters of :func:`list_traces` (0 when the home has no store)."""
    store = trace_store(home)
    return store.count(_filter(None, 0, **filters)) if store else 0


@dataclass(frozen=True)
class Waterfall:
    """One trace for display.

    Attributes:
        summary: the trace's summary (see :meth:`traces.records.TraceSummary.to_dict`).
        spans: one row per span in start order: span_id, parent_id, name, depth, start_ms and
            end_ms (from the trace's start), duration_ms, status, kind.
        attributes: one row per span attribute: span_id, name, key, value (text; arrays cut).
    """

    summary: dict[str, Any]
    spans: pd.DataFrame
    attributes: pd.DataFrame


def _depths(spans: tuple[SpanRecord, ...]) -> dict[str, int]:
    parent = {s.span_id: s.parent_id for s in spans}
    depth: dict[str, int] = {}
    for s in spans:
        d, p, seen = 0, parent.get(s.span_id), {s.span_id}
        while p in parent and p not in seen:
            seen.add(p)
            d, p = d + 1, parent[p]
        depth[s.span_id] = d
    return depth


def _text(value: Any) -> str:
    if isinstance(value, tuple):
        shown = ", ".join(map(str, value[:SHOWN_ITEMS]))
        return f"[{shown}{f', … ({len(value)} items)' if len(value) > SHOWN_ITEMS else ''}]"
    return str(value)


def _waterfall(detail: TraceDetail) -> Waterfall:
    t0 = min((s.start_ns for s in detail.spans), default=detail.summary.start_ns)
    depth = _depths(detail.spans)
    spans = pd.DataFrame([{"span_id": s.span_id, "parent_id": s.parent_id, "name": s.name, "depth": depth[s.span_id],
                           "start_ms": (s.start_ns - t0) / 1e6, "end_ms": (s.end_ns - t0) / 1e6,
                           "duration_ms": s.duration_ms, "status": s.status, "kind": s.kind} for s in detail.spans],
                         columns=["span_id", "parent_id", "name", "depth", "start_ms", "end_ms", "duration_ms",
                                  "status", "kind"])
    attributes = pd.DataFrame([{"span_id": s.span_id, "name": s.name, "key": k, "value": _text(val)}
                               for s in detail.spans for k, val in sorted(s.attributes.items())],
                              columns=["span_id", "name", "key", "value"])
    return Waterfall(detail.summary.to_dict(), spans, attributes)


def waterfall(home: str | Path, trace_id: str) -> Waterfall | None:
    """The trace's spans and attributes, or None when it is not stored."""
    store = trace_store(home)
    detail = store.load_trace(trace_id.strip()) if store and trace_id else None
    return _waterfall(detail) if detail else None
