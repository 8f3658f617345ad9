"""SearchTrace: every search stage as an OpenTelemetry span, stored locally and exported over OTLP.

This is the package's public API: the span vocabulary and the pure attribute
builders (modules), the tracer provider and its settings, the trace store (the
opener that chooses its backend, the protocol and the capabilities it declares)
and the records it returns. Names load their module on first use, so importing the
package does not start the OpenTelemetry SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchtrace._lazy import exports

if TYPE_CHECKING:
    from searchtrace.traces.cli import add_search_flags
    from searchtrace.traces.export.commits import StoreCommits
    from searchtrace.traces.export.deferred import DeferredAttributes
    from searchtrace.traces.export.exporter import FailureKind
    from searchtrace.traces.export.provider import TraceHandles, TraceSettings, make_tracer_provider
    from searchtrace.traces.receive.app import receiver_for_store
    from searchtrace.traces.receive.route import TRACES_PATH, OtlpReceiver
    from searchtrace.traces.spans import attributes, foreign, vocabulary
    from searchtrace.traces.spans.attributes import CaptureConfig
    from searchtrace.traces.spans.foreign import Document
    from searchtrace.traces.spans.vocabulary import SEARCH_SPAN, SpanKind, TraceKind
    from searchtrace.traces.store.damage import is_damaged, set_aside
    from searchtrace.traces.store.opening import existing_trace_store, open_trace_store
    from searchtrace.traces.store.postgres import PostgresTraceStore
    from searchtrace.traces.store.postgres_schema import FOREIGN_MIGRATION, TRACES_MIGRATION
    from searchtrace.traces.store.protocol import Capabilities, TraceStoreProtocol
    from searchtrace.traces.store.readonly import reading
    from searchtrace.traces.store.records import (
        EventRecord,
        Fetch,
        Impression,
        InteractionFilter,
        SearchFilter,
        SearchRecord,
        SpanRecord,
        TraceDetail,
        TraceFilter,
        TraceOrder,
        TraceSummary,
        parse_when,
        to_ns,
    )
    from searchtrace.traces.store.searches import key_of
    from searchtrace.traces.store.sqlite import TraceStore

__getattr__, __dir__, __all__ = exports(__name__, __file__)
