"""Stored traces in the OTLP/JSON encoding, one trace per line.

The shape is ``{"resourceSpans": [{"resource", "scopeSpans": [{"scope", "spans"}]}]}``
as in the OTLP specification's JSON Protobuf Encoding: ids in hex, 64-bit
integers and timestamps as decimal strings, enums as integers, field names in
lowerCamelCase. Any OTLP/JSON reader (the collector's ``otlpjsonfile``
receiver, Phoenix, Jaeger) can load a line.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import replace
from itertools import groupby
from typing import Any, Iterator, Mapping, TextIO

from searchtrace.traces.store.protocol import TraceStoreProtocol
from searchtrace.traces.store.records import SpanRecord, TraceDetail, TraceFilter, TraceSummary

_KIND = {"INTERNAL": 1, "SERVER": 2, "CLIENT": 3, "PRODUCER": 4, "CONSUMER": 5}
_STATUS = {"UNSET": 0, "OK": 1, "ERROR": 2}
_PAGE = 500


def any_value(value: Any) -> dict[str, Any]:
    """One attribute value as an OTLP ``AnyValue``."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value if math.isfinite(value) else _non_finite(value)}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [any_value(x) for x in value]}}
    return {"stringValue": str(value)}


def key_values(attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": any_value(x)} for k, x in attributes.items()]


def span_json(span: SpanRecord) -> dict[str, Any]:
    """One span as an OTLP/JSON ``Span``."""
    out: dict[str, Any] = {
        "traceId": span.trace_id,
        "spanId": span.span_id,
        "parentSpanId": span.parent_id or "",
        "name": span.name,
        "kind": _KIND.get(span.kind, 0),
        "startTimeUnixNano": str(span.start_ns),
        "endTimeUnixNano": str(span.end_ns),
        "attributes": key_values(span.attributes),
        "events": [{"timeUnixNano": str(e.time_ns), "name": e.name, "attributes": key_values(e.attributes)}
                   for e in span.events],
        "status": {"code": _STATUS.get(span.status, 0)},
    }
    if span.status_message:
        out["status"]["message"] = span.status_message
    return out


def trace_json(detail: TraceDetail) -> dict[str, Any]:
    """One trace as an OTLP/JSON ``TracesData`` object (spans grouped by instrumentation scope)."""
    by_scope = groupby(sorted(detail.spans, key=lambda s: (s.scope or "", s.start_ns)), key=lambda s: s.scope or "")
    return {"resourceSpans": [{
        "resource": {"attributes": key_values(detail.resource)},
        "scopeSpans": [{"scope": {"name": scope}, "spans": [span_json(s) for s in spans]} for scope, spans in by_scope],
    }]}


def export_jsonl(store: TraceStoreProtocol, out: TextIO, flt: TraceFilter | None = None) -> int:
    """Write the traces matching ``flt`` (all when None; its limit caps the total) as JSON lines.

    Returns:
        How many traces were written.
    """
    written = 0
    for summary in _summaries(store, flt or TraceFilter(limit=None)):
        detail = store.load_trace(summary.trace_id)
        if detail is not None:  # None: pruned meanwhile
            out.write(json.dumps(trace_json(detail), ensure_ascii=False, separators=(",", ":")) + "\n")
            written += 1
    return written


def _summaries(store: TraceStoreProtocol, flt: TraceFilter) -> Iterator[TraceSummary]:
    # Pinning ``until`` keeps offsets stable while searches add newer traces during the export.
    flt = flt if flt.until is not None else replace(flt, until=time.time_ns())
    remaining, offset = flt.limit, flt.offset
    while remaining is None or remaining > 0:
        size = _PAGE if remaining is None else min(_PAGE, remaining)
        page = store.list_traces(replace(flt, offset=offset, limit=size))
        yield from page
        if len(page) < size:
            return
        offset += size
        remaining = None if remaining is None else remaining - size


def _non_finite(value: float) -> str:
    # proto3 JSON spells the IEEE specials as strings
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
