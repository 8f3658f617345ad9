"""Deferred attributes: heavy span attributes built at export time, off the search's path.

Setting a 100-element array attribute makes the SDK check every element on the
calling thread; a search records nine such arrays. With deferral the search
only parks ``(builder, args)`` for the span (a dict insert); each exporter,
wrapped in :class:`MaterializingExporter`, builds the values in its batch
thread and exports a copy of the span carrying them. Every consumer (one per
exporter) sees the same attributes; the entry is dropped once all have.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import Span

Builder = Callable[..., Mapping[str, Any]]
"""A pure attribute builder (``searchtrace.traces.spans.attributes``)."""


class DeferredAttributes:
    """Parked attribute builders per span id.

    Args:
        consumers: how many exporters will materialize each span.
        max_spans: parked spans kept at most (oldest dropped: a span that never
            reaches an exporter, say dropped by a full queue, cannot leak).
    """

    def __init__(self, consumers: int = 1, max_spans: int = 200_000) -> None:
        self.consumers = consumers
        self.max_spans = max_spans
        self._lock = threading.Lock()
        self._pending: OrderedDict[int, list] = OrderedDict()  # span id -> [remaining, [(builder, args)]]

    def defer(self, span: Span, builder: Builder, args: tuple) -> None:
        span_id = span.get_span_context().span_id
        with self._lock:
            entry = self._pending.get(span_id)
            if entry is None:
                entry = self._pending[span_id] = [self.consumers, []]
                while len(self._pending) > self.max_spans:
                    self._pending.popitem(last=False)
            entry[1].append((builder, args))

    def attributes(self, span_id: int) -> dict[str, Any]:
        """Build the parked attributes of a span (once per consumer)."""
        with self._lock:
            entry = self._pending.get(span_id)
            if entry is None:
                return {}
            entry[0] -= 1
            if entry[0] <= 0:
                del self._pending[span_id]
            builders = list(entry[1])
        out: dict[str, Any] = {}
        for builder, args in builders:
            out.update(builder(*args))
        return out

    def __len__(self) -> int:
        return len(self._pending)

    def materialize(self, span: ReadableSpan) -> ReadableSpan:
        extra = self.attributes(span.context.span_id)
        if not extra:
            return span
        return ReadableSpan(
            name=span.name, context=span.context, parent=span.parent, resource=span.resource,
            attributes={**(span.attributes or {}), **extra}, events=span.events, links=span.links,
            kind=span.kind, status=span.status, start_time=span.start_time, end_time=span.end_time,
            instrumentation_scope=span.instrumentation_scope,
        )


class MaterializingExporter(SpanExporter):
    """Adds each span's deferred attributes before handing the batch to ``inner``."""

    def __init__(self, inner: SpanExporter, deferred: DeferredAttributes) -> None:
        self.inner = inner
        self.deferred = deferred

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.inner.export([self.deferred.materialize(s) for s in spans])

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)

    def __getattr__(self, name: str) -> Any:  # counters and names of the wrapped exporter
        return getattr(self.inner, name)
