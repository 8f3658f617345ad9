"""SearchTrace: span vocabulary, attribute builders, local store and exporters."""

from traces.attributes import CaptureConfig
from traces.records import SpanRecord, TraceDetail, TraceFilter, TraceSummary
from traces.store import TraceStore
from traces.vocabulary import SpanKind, SpanName

__all__ = ["CaptureConfig", "SpanKind", "SpanName", "SpanRecord", "TraceDetail", "TraceFilter", "TraceStore",
           "TraceSummary"]
