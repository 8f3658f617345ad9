"""Stage spans of one search: children of the root, errors recorded, attributes built now or deferred.

Every search opens eleven spans, so this is on the search's hot path: a stage
span is started with an explicit parent (never made current: nothing nests in
it), with the attributes known up front passed at creation, and ended by a
plain context-manager object rather than a generator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, TypeVarTuple

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Status, StatusCode

from searchtrace.names import Stage
from searchtrace.traces import DeferredAttributes
from searchtrace.traces import attributes as attrs
from searchtrace.traces import vocabulary as v

Args = TypeVarTuple("Args")
"""The parameters of one attribute builder: :meth:`StageSpans.record` checks its call against them."""


@dataclass
class StageSpans:
    """Opens stage spans as children of the root and records errors on them.

    Attributes:
        tracer: the search's tracer.
        parent: the root span's context.
        deferred: ``traces.deferred.DeferredAttributes``, or None to set attributes now.
        degraded: stages that failed and were skipped, in order.
    """

    tracer: trace.Tracer
    parent: Context
    deferred: DeferredAttributes | None = None
    degraded: list[str] = field(default_factory=list)

    def record(self, span: trace.Span, builder: Callable[[*Args], Mapping[str, Any]], *args: *Args) -> None:
        """Set the attributes ``builder(*args)`` builds on ``span`` (now, or at export when deferred)."""
        record(span, builder, *args, deferred=self.deferred)

    def stage(self, name: Stage, attributes: Mapping[str, Any] | None = None) -> _Stage:
        """A context manager opening the stage's span; ``attributes`` are set at creation."""
        return _Stage(self, name, {**attrs.span_kind(name.value), **attributes} if attributes else attrs.span_kind(name.value))

    def skipped(self, name: Stage, reason: str) -> _Stage:
        """A stage that does not run (its fusion weight is 0): a span saying so, for an honest trace."""
        return self.stage(name, {v.SKIPPED: reason})


class _Stage:
    """Starts a stage span on entry; on exit records an exception (and re-raises it) and ends the span."""

    __slots__ = ("_spans", "_name", "_attributes", "_span")

    def __init__(self, spans: StageSpans, name: Stage, attributes: Mapping[str, Any]) -> None:
        self._spans, self._name, self._attributes = spans, name, attributes

    def __enter__(self) -> trace.Span:
        self._span = self._spans.tracer.start_span(self._name.value, context=self._spans.parent,
                                                   attributes=self._attributes, record_exception=False,
                                                   set_status_on_exception=False)
        return self._span

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        span = self._span
        if isinstance(exc, Exception):
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, str(exc)))
        span.end()
        return False


def record(span: trace.Span, builder: Callable[[*Args], Mapping[str, Any]], *args: *Args,
           deferred: DeferredAttributes | None = None) -> None:
    """Set the attributes ``builder(*args)`` builds, only if the span records (no cost untraced).

    With ``deferred`` the builder runs at export time instead (``traces.deferred``).
    """
    if span.is_recording():
        if deferred is not None:
            deferred.defer(span, builder, args)
        else:
            span.set_attributes(builder(*args))


def record_snapshot(span: trace.Span, builder: Callable[[*Args], Mapping[str, Any]], *args: *Args,
                    deferred: DeferredAttributes | None = None) -> None:
    """Build the attributes now (of something the caller may change later), set them now or at export.

    With ``deferred`` only the SDK's per-value checks move to export time, off the search's path.
    """
    if span.is_recording():
        if deferred is not None:
            deferred.defer(span, dict, (builder(*args),))
        else:
            span.set_attributes(builder(*args))


def trace_id(span: trace.Span) -> str:
    """The span's trace id as 32 hex digits ("" for a non-recording span)."""
    ctx = span.get_span_context()
    return format(ctx.trace_id, "032x") if ctx.is_valid else ""
