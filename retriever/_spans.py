"""Stage spans of one search: children of the root, errors recorded, attributes built now or deferred."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from traces import attributes as attrs
from traces import vocabulary as v
from traces.vocabulary import SpanName


@dataclass
class StageSpans:
    """Opens stage spans as children of the root (not made current: nothing nests in
    them, and skipping the context switch keeps tracing cheap); records errors on them."""

    tracer: trace.Tracer
    parent: object  # the root span's context
    deferred: object = None  # traces.deferred.DeferredAttributes, or None to set attributes now
    degraded: list[str] = field(default_factory=list)

    def record(self, span: trace.Span, builder, *args) -> None:
        record(span, builder, *args, deferred=self.deferred)

    @contextmanager
    def stage(self, name: SpanName) -> Iterator[trace.Span]:
        span = self.tracer.start_span(name.value, context=self.parent, attributes=attrs.span_kind(name),
                                      record_exception=False, set_status_on_exception=False)
        try:
            yield span
        except Exception as exc:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, str(exc)))
            raise
        finally:
            span.end()

    @contextmanager
    def skipped(self, name: SpanName, reason: str) -> Iterator[trace.Span]:
        """A stage that does not run (its fusion weight is 0): a span saying so, for an honest trace."""
        with self.stage(name) as span:
            span.set_attribute(v.SKIPPED, reason)
            yield span


def record(span: trace.Span, builder, *args, deferred=None) -> None:
    """Set the attributes ``builder(*args)`` builds, only if the span records (no cost untraced).

    With ``deferred`` the builder runs at export time instead (``traces.deferred``).
    """
    if span.is_recording():
        if deferred is not None:
            deferred.defer(span, builder, args)
        else:
            span.set_attributes(builder(*args))


def trace_id(span: trace.Span) -> str:
    ctx = span.get_span_context()
    return format(ctx.trace_id, "032x") if ctx.is_valid else ""
