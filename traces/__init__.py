"""SearchTrace: span vocabulary, attribute builders, local store and exporters."""

from traces.attributes import CaptureConfig
from traces.vocabulary import SpanKind, SpanName

__all__ = ["CaptureConfig", "SpanKind", "SpanName"]
