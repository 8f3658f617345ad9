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
    from searchtrace.traces.provider import TraceHandles, TraceSettings, make_tracer_provider
    from searchtrace.traces.records import EventRecord, SpanRecord, TraceDetail, TraceFilter, TraceSummary
    from searchtrace.traces.repair import set_aside
    from searchtrace.traces.store import TraceStore
    from searchtrace.traces.vocabulary import SEARCH_SPAN, SpanKind

_EXPORTS = {
    "CaptureConfig": "searchtrace.traces.attributes",
    "DeferredAttributes": "searchtrace.traces.deferred",
    "FailureKind": "searchtrace.traces.exporter",
    "TraceHandles": "searchtrace.traces.provider",
    "TraceSettings": "searchtrace.traces.provider",
    "make_tracer_provider": "searchtrace.traces.provider",
    "EventRecord": "searchtrace.traces.records",
    "SpanRecord": "searchtrace.traces.records",
    "TraceDetail": "searchtrace.traces.records",
    "TraceFilter": "searchtrace.traces.records",
    "TraceSummary": "searchtrace.traces.records",
    "set_aside": "searchtrace.traces.repair",
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
