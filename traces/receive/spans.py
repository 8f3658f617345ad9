"""An ``ExportTraceServiceRequest`` to the ``ReadableSpan``s a trace store writes, each checked on its own.

The store sees a received span as it sees one of ours: its resource (with its attributes and schema URL), its
instrumentation scope, parent, kind, status and message, attributes, events, links and times. A span without
a valid trace id (16 bytes, not all zero) or span id (8 bytes, not all zero), or with a parent id of the wrong
length, is rejected alone: counted, and named in the answer's ``partial_success`` message; the rest are kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags, TraceState

from searchtrace.traces.receive.limits import ReceiveLimits
from searchtrace.traces.receive.values import Cuts, attributes

__all__ = ["Converted", "count_spans", "to_spans"]

#: OTLP's ``Span.SpanKind`` numbers to the SDK's kinds; unspecified and unknown numbers read as INTERNAL.
KINDS = {1: SpanKind.INTERNAL, 2: SpanKind.SERVER, 3: SpanKind.CLIENT, 4: SpanKind.PRODUCER, 5: SpanKind.CONSUMER}
#: OTLP's ``Status.StatusCode`` numbers; unknown numbers read as UNSET.
STATUSES = {1: StatusCode.OK, 2: StatusCode.ERROR}
HAS_IS_REMOTE, IS_REMOTE = 0x100, 0x200  # SpanFlags: whether the parent's remoteness is known, and is it
MAX_REASONS = 3  # rejected spans named in the answer's message; the count covers the rest


@dataclass
class Converted:
    """The spans kept, how many were rejected and why (the first few), and what the limits cut."""

    spans: list[ReadableSpan] = field(default_factory=list)
    rejected: int = 0
    reasons: list[str] = field(default_factory=list)
    cuts: Cuts = field(default_factory=Cuts)

    def message(self) -> str:
        """The ``partial_success.error_message``: how many spans were rejected, the first reasons."""
        if not self.rejected:
            return ""
        more = f"; and {self.rejected - len(self.reasons)} more" if self.rejected > len(self.reasons) else ""
        return f"{self.rejected} spans rejected: {'; '.join(self.reasons)}{more}"


def count_spans(request: Any) -> int:
    """Spans in a request, counted before any is converted (the request's bound is checked on it)."""
    return sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)


def to_spans(request: Any, limits: ReceiveLimits) -> Converted:
    """Every span of ``request`` kept or rejected; resources and scopes are converted once each."""
    out = Converted()
    for r, resource_spans in enumerate(request.resource_spans):
        resource = Resource(attributes(resource_spans.resource.attributes, limits.attributes, limits.value_chars,
                                       out.cuts), resource_spans.schema_url or None)
        for s, scope_spans in enumerate(resource_spans.scope_spans):
            scope = _scope(scope_spans, limits, out.cuts)
            for i, span in enumerate(scope_spans.spans):
                problem = _id_problem(span)
                if problem is None:
                    out.spans.append(_span(span, resource, scope, limits, out.cuts))
                    continue
                out.rejected += 1
                if len(out.reasons) < MAX_REASONS:
                    out.reasons.append(f"resourceSpans[{r}].scopeSpans[{s}].spans[{i}]: {problem}")
    return out


def _scope(scope_spans: Any, limits: ReceiveLimits, cuts: Cuts) -> InstrumentationScope:
    scope = scope_spans.scope
    return InstrumentationScope(scope.name, scope.version or None, scope_spans.schema_url or None,
                                attributes(scope.attributes, limits.attributes, limits.value_chars, cuts))


def _id_problem(span: Any) -> str | None:
    """Why a span's ids cannot be stored, or None."""
    for name, size in (("traceId", 16), ("spanId", 8)):
        raw = getattr(span, "trace_id" if name == "traceId" else "span_id")
        if len(raw) != size or not any(raw):
            return f"{name} is {len(raw)} bytes{' of zeros' if raw else ''}; a valid one is {size} non-zero bytes"
    if span.parent_span_id and len(span.parent_span_id) != 8:
        return f"parentSpanId is {len(span.parent_span_id)} bytes; a parent's is 8 (or none for a root)"
    return None


def _span(span: Any, resource: Resource, scope: InstrumentationScope, limits: ReceiveLimits,
          cuts: Cuts) -> ReadableSpan:
    trace_id = int.from_bytes(span.trace_id, "big")
    state = _trace_state(span.trace_state)
    context = SpanContext(trace_id, int.from_bytes(span.span_id, "big"), is_remote=False,
                          trace_flags=TraceFlags(span.flags & 0xFF), trace_state=state)
    parent = None
    if span.parent_span_id and any(span.parent_span_id):
        remote = bool(span.flags & HAS_IS_REMOTE and span.flags & IS_REMOTE)
        parent = SpanContext(trace_id, int.from_bytes(span.parent_span_id, "big"), is_remote=remote)
    return ReadableSpan(
        span.name, context=context, parent=parent, resource=resource,
        attributes=attributes(span.attributes, limits.attributes, limits.value_chars, cuts),
        events=_events(span.events, limits, cuts), links=_links(span.links, limits, cuts),
        kind=KINDS.get(span.kind, SpanKind.INTERNAL),
        status=Status(STATUSES.get(span.status.code, StatusCode.UNSET),
                      span.status.message or None if span.status.code == 2 else None),
        start_time=span.start_time_unix_nano, end_time=span.end_time_unix_nano, instrumentation_scope=scope)


def _events(events: Any, limits: ReceiveLimits, cuts: Cuts) -> list[Event]:
    if len(events) > limits.events:
        cuts.dropped += len(events) - limits.events
    return [Event(e.name, attributes(e.attributes, limits.attributes, limits.value_chars, cuts),
                  e.time_unix_nano, limit=None) for e in events[:limits.events]]


def _links(links: Any, limits: ReceiveLimits, cuts: Cuts) -> list[Link]:
    kept = []
    for link in links[:limits.events]:
        if len(link.trace_id) != 16 or len(link.span_id) != 8:
            cuts.dropped += 1
            continue
        context = SpanContext(int.from_bytes(link.trace_id, "big"), int.from_bytes(link.span_id, "big"),
                              is_remote=True, trace_state=_trace_state(link.trace_state))
        kept.append(Link(context, attributes(link.attributes, limits.attributes, limits.value_chars, cuts)))
    cuts.dropped += max(0, len(links) - limits.events)
    return kept


def _trace_state(header: str) -> TraceState:
    """The W3C ``tracestate`` a span carries; one that does not parse is left empty (it says nothing we read)."""
    if not header:
        return TraceState()
    try:
        return TraceState.from_header([header])
    except Exception:  # noqa: BLE001 - a malformed header is the sender's; the span is still kept
        return TraceState()
