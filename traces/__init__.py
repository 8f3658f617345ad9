"""SearchTrace: every search stage as an OpenTelemetry span, stored locally and exported over OTLP.

This is the package's public API: the span vocabulary and the pure attribute
builders (modules), the tracer provider and its settings, the local store and
the records it returns. Names load their module on first use, so importing the
package does not start the OpenTelemetry SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchtrace._lazy import exports

if TYPE_CHECKING:
    from searchtrace.traces import attributes, vocabulary
    from searchtrace.traces.attributes import CaptureConfig
    from searchtrace.traces.deferred import DeferredAttributes
    from searchtrace.traces.exporter import FailureKind
    from searchtrace.traces.records import EventRecord, SpanRecord, TraceDetail, TraceFilter, TraceSummary
    from searchtrace.traces.repair import set_aside
    from searchtrace.traces.setup import TraceHandles, TraceSettings, make_tracer_provider
    from searchtrace.traces.store import TraceStore
    from searchtrace.traces.vocabulary import SEARCH_SPAN, SpanKind

_EXPORTS = {
    "CaptureConfig": "searchtrace.traces.attributes",
    "DeferredAttributes": "searchtrace.traces.deferred",
    "EventRecord": "searchtrace.traces.records",
    "SpanRecord": "searchtrace.traces.records",
    "TraceDetail": "searchtrace.traces.records",
    "TraceFilter": "searchtrace.traces.records",
    "TraceSummary": "searchtrace.traces.records",
    "set_aside": "searchtrace.traces.repair",
    "TraceHandles": "searchtrace.traces.setup",
    "FailureKind": "searchtrace.traces.exporter",
    "TraceSettings": "searchtrace.traces.setup",
    "make_tracer_provider": "searchtrace.traces.setup",
    "TraceStore": "searchtrace.traces.store",
    "SEARCH_SPAN": "searchtrace.traces.vocabulary",
    "SpanKind": "searchtrace.traces.vocabulary",
}

__all__ = [
    "CaptureConfig",
    "DeferredAttributes",
    "EventRecord",
    "FailureKind",
    "SEARCH_SPAN",
    "SpanKind",
    "SpanRecord",
    "TraceDetail",
    "TraceFilter",
    "TraceHandles",
    "TraceSettings",
    "TraceStore",
    "TraceSummary",
    "attributes",
    "make_tracer_provider",
    "set_aside",
    "vocabulary",
]
__getattr__, __dir__ = exports(__name__, _EXPORTS)
