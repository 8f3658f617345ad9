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
    from searchtrace.traces.cli import add_search_flags
    from searchtrace.traces.commits import StoreCommits
    from searchtrace.traces.damage import is_damaged, set_aside
    from searchtrace.traces.deferred import DeferredAttributes
    from searchtrace.traces.exporter import FailureKind
    from searchtrace.traces.postgres import PostgresTraceStore
    from searchtrace.traces.protocol import TraceStoreProtocol
    from searchtrace.traces.provider import TraceHandles, TraceSettings, make_tracer_provider
    from searchtrace.traces.readonly import reading
    from searchtrace.traces.records import (
        EventRecord,
        Fetch,
        Impression,
        InteractionFilter,
        SpanRecord,
        TraceDetail,
        TraceFilter,
        TraceSummary,
        parse_when,
        to_ns,
    )
    from searchtrace.traces.store import TraceStore
    from searchtrace.traces.vocabulary import SEARCH_SPAN, SpanKind, TraceKind

__getattr__, __dir__, __all__ = exports(__name__, __file__)
