"""The tracer provider: built from one frozen settings object, :class:`TraceSettings`.

Settings resolve as explicit argument > environment variable > default. The
OTLP exporters read the standard ``OTEL_EXPORTER_OTLP_*`` variables themselves
(endpoint, headers, timeout, certificates, compression).
"""

from __future__ import annotations

import enum
import logging
import os
import threading
from dataclasses import dataclass, field
from typing import Mapping
from urllib.parse import urlsplit, urlunsplit

from opentelemetry.context import Context
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

from searchtrace import environment as names
from searchtrace.database import StoreUrl, resolve_store_url
from searchtrace.envvalues import choice, flag, integer, number, pick, text
from searchtrace.errors import BackendUnavailable, ConfigError
from searchtrace.home import Home
from searchtrace.notices import tell
from searchtrace.traces.export.buffered import BUFFER_SPANS, BufferedStoreExporter
from searchtrace.traces.export.deferred import DeferredAttributes, MaterializingExporter
from searchtrace.traces.export.droplog import DropLog
from searchtrace.traces.export.exporter import ExportStats, FailureKind, LossSinks, SafeExporter, StoreSpanExporter
from searchtrace.traces.export.losses import LossLedger
from searchtrace.traces.export.spill import SPILL_BYTES, SpillFile, spill_folder
from searchtrace.traces.spans.attributes import CaptureConfig
from searchtrace.traces.spans.openinference import OpenInferenceExporter
from searchtrace.traces.store.opening import open_trace_store
from searchtrace.traces.store.protocol import TraceStoreProtocol

OTLP_ENDPOINT_VARS = (names.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, names.OTEL_EXPORTER_OTLP_ENDPOINT)
OTLP_PROTOCOL_VARS = (names.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, names.OTEL_EXPORTER_OTLP_PROTOCOL)
ATTRIBUTE_LIMIT_VARS = (names.OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT, names.OTEL_ATTRIBUTE_COUNT_LIMIT)
log = logging.getLogger(__name__)


class OtlpProtocol(str, enum.Enum):
    HTTP_PROTOBUF = "http/protobuf"
    GRPC = "grpc"


@dataclass(frozen=True)
class TraceSettings:
    """Where spans go and what they record.

    Attributes:
        store: write spans to the local store (``home/traces.sqlite``).
        otlp: also send them over OTLP (on by default when an OTLP endpoint variable is set).
        protocol: OTLP transport.
        capture: privacy switches and the candidate cap, passed to the retriever too.
        service_name: the ``service.name`` resource attribute.
        schedule_delay_ms: how long finished spans wait before a batch export to the
            store (OTEL_BSP_SCHEDULE_DELAY, else 1 s so traces show up quickly).
        max_queue_size: finished spans the batch processors hold before dropping
            (OTEL_BSP_MAX_QUEUE_SIZE, else 16,384: the SDK's 2,048 filled up and dropped
            spans when an eval ran searches back to back on a loaded machine).
        max_span_attributes: the SDK's attribute cap per span; None leaves it to the
            OTEL_*ATTRIBUTE_COUNT_LIMIT variables (SDK default 128, too few for 100 candidates).
        exit_timeout_s: how long a command waits at exit for an OTLP collector
            (SEARCHTRACE_OTLP_EXIT_TIMEOUT, else 1 s); see :meth:`TraceHandles.close`.
        store_url: the shared store (``--store``, ``$SEARCHTRACE_STORE``) that takes the place of the
            home's file; None: the home's.
        store_buffer: spans held while the shared store is out of reach
            (``$SEARCHTRACE_STORE_BUFFER``, else 100,000); more are dropped, counted.
        spill_bytes: the bound of each process's spill file of held spans (``home/traces.spill``); what does
            not fit is dropped, counted.
        store_retry_s: how long a batch keeps retrying while another process holds the
            store's write lock, before its spans are dropped (and counted).
    """

    store: bool = True
    otlp: bool = False
    protocol: OtlpProtocol = OtlpProtocol.HTTP_PROTOBUF
    capture: CaptureConfig = field(default_factory=CaptureConfig)
    service_name: str = "searchtrace"
    schedule_delay_ms: int = 1000
    max_queue_size: int = 16_384
    max_span_attributes: int | None = None
    exit_timeout_s: float = 1.0
    store_retry_s: float = 30.0
    store_url: StoreUrl | None = None
    store_buffer: int = BUFFER_SPANS
    spill_bytes: int = SPILL_BYTES

    def for_home(self, home: Home) -> TraceSettings:
        """These settings, with the local store off (and a one-line warning) when ``home`` cannot be written.

        A read-only home (an index shipped in an image, a restored cache) still
        searches; its traces then go only where they can (OTLP, when on).
        """
        if not self.store or self.store_url is not None or home.writable():
            return self
        from dataclasses import replace

        where = "sent over OTLP only" if self.otlp else "off"
        tell(log, f"warning: traces are {where}: {home.root} is not writable "
                  "(point --home or $SEARCHTRACE_HOME at a writable folder to keep them)")
        return replace(self, store=False)

    @classmethod
    def resolve(cls, *, store: bool | None = None, otlp: bool | None = None, protocol: str | None = None,
                capture_query: bool | None = None, capture_content: bool | None = None,
                max_candidates: int | None = None, service_name: str | None = None, store_url: str | None = None,
                environ: Mapping[str, str] | None = None) -> TraceSettings:
        """Explicit argument > environment variable > default. Raises ConfigError (a ValueError) on a bad variable.

        ``store_url`` is ``--store``'s value (else ``$SEARCHTRACE_STORE``; neither: the home's store).
        """
        env = os.environ if environ is None else environ
        sdk_off = flag(env, names.OTEL_SDK_DISABLED) is True
        capture = CaptureConfig(
            capture_query=pick(capture_query, flag(env, names.SEARCHTRACE_CAPTURE_QUERY), True),
            capture_content=pick(capture_content, flag(env, names.SEARCHTRACE_CAPTURE_CONTENT), False),
            max_candidates=pick(max_candidates, integer(env, names.SEARCHTRACE_MAX_CANDIDATES), 100),
        )
        limit_from_env = any(text(env, k) for k in ATTRIBUTE_LIMIT_VARS)
        return cls(
            store=pick(store, flag(env, names.SEARCHTRACE_TRACE_STORE), not sdk_off),
            otlp=pick(otlp, flag(env, names.SEARCHTRACE_OTLP), _otlp_default(env) and not sdk_off),
            protocol=_protocol(protocol, env),
            capture=capture,
            service_name=service_name or text(env, names.OTEL_SERVICE_NAME) or "searchtrace",
            schedule_delay_ms=pick(None, integer(env, names.OTEL_BSP_SCHEDULE_DELAY), 1000),
            max_queue_size=pick(None, integer(env, names.OTEL_BSP_MAX_QUEUE_SIZE, minimum=1), 16_384),
            max_span_attributes=None if limit_from_env else attribute_limit(capture),
            exit_timeout_s=pick(None, number(env, names.SEARCHTRACE_OTLP_EXIT_TIMEOUT, minimum=0), 1.0),
            store_url=resolve_store_url(store_url, env),
            store_buffer=pick(None, integer(env, names.SEARCHTRACE_STORE_BUFFER, minimum=0), BUFFER_SPANS),
        )


class CountedProcessor(SpanProcessor):
    """A span processor in front of another, counting the spans that ended (were handed to it)."""

    def __init__(self, inner: BatchSpanProcessor) -> None:
        self.inner = inner
        self.ended = 0
        self._lock = threading.Lock()

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self.inner.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        with self._lock:
            self.ended += 1
        self.inner.on_end(span)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.inner.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self.inner.shutdown()


@dataclass(frozen=True)
class CloseReport:
    """What :meth:`TraceHandles.close` could not deliver: spans per exporter, by name (none: empty)."""

    unsent: Mapping[str, int]


@dataclass(frozen=True)
class TraceHandles:
    """What make_tracer_provider built, to flush, stop and report on it.

    Attributes:
        provider: the tracer provider.
        store: the trace store, when on: the home's file, or the shared store.
        exporters: the store exporter and/or the OTLP exporter.
        deferred: pass to the Retriever: heavy attributes built at export.
        processors: each exporter's processor, in the order of ``exporters``.
    """

    provider: TracerProvider
    store: TraceStoreProtocol | None
    exporters: tuple[StoreSpanExporter | BufferedStoreExporter | SafeExporter, ...]
    deferred: DeferredAttributes | None = None
    processors: tuple[CountedProcessor, ...] = ()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Export every finished span now, to the store and to a collector (see :meth:`flush_store`)."""
        return self.provider.force_flush(timeout_millis)

    def flush_store(self) -> bool:
        """Write every finished span to the local store now; True when all of them were stored.

        False when a write failed (its spans are dropped: see :meth:`stats`, and
        the store exporter's ``last_failure`` says why). A collector is not waited for.
        """
        for exporter, processor in zip(self.exporters, self.processors):
            if isinstance(exporter, StoreSpanExporter):
                before = exporter.stats().dropped_spans
                processor.force_flush()
                return exporter.stats().dropped_spans == before
            if isinstance(exporter, BufferedStoreExporter):  # the shared store: held spans are not stored yet
                before = exporter.stats().dropped_spans
                processor.force_flush()
                return exporter.held == 0 and exporter.stats().dropped_spans == before
        return True

    @property
    def store_failure(self) -> FailureKind | None:
        """Why the store's last failed write failed (None: none failed)."""
        return next((e.last_failure for e in self.exporters if isinstance(e, (StoreSpanExporter, BufferedStoreExporter))),
                    None)

    def shutdown(self) -> None:
        """Flush everything, however long it takes, then close the exporters and the store."""
        self.provider.shutdown()

    def close(self, remote_timeout_s: float = 1.0) -> CloseReport:
        """Flush and stop at the end of a command, waiting at most ``remote_timeout_s`` for a collector.

        The local store is always flushed in full. What an OTLP collector has not
        taken within the timeout (it is down, or slow) is given up, counted, and
        reported once on the log; the process then exits without waiting on it.
        """
        unsent: dict[str, int] = {}
        for exporter, processor in zip(self.exporters, self.processors):
            if isinstance(exporter, (StoreSpanExporter, BufferedStoreExporter)):
                processor.shutdown()  # the shared store's exporter waits a bounded time for held spans
                _count_never_exported(exporter, processor)
                continue
            # The SDK's flush blocks until the exporter returns, whatever the timeout (a dead
            # collector: its retries); it runs in a daemon thread the process need not wait for.
            flushing = threading.Thread(target=processor.force_flush, name="otlp-final-flush", daemon=True)
            flushing.start()
            flushing.join(remote_timeout_s)
            stats = exporter.stats()
            missing = processor.ended - stats.exported_spans - stats.dropped_spans
            lost = max(missing, 0) + stats.dropped_spans
            exporter.lost(missing, FailureKind.UNSTORED_AT_EXIT)
            if lost:
                unsent[exporter.name] = lost
                log.warning("%d spans were not sent to %s (gave up after %.1f s at exit)", lost, exporter.name,
                            remote_timeout_s)
            exporter.stop_waiting()
        return CloseReport(unsent)

    def stats(self) -> dict[str, ExportStats]:
        """Counters of each exporter, by name."""
        return {e.name: e.stats() for e in self.exporters}

    def check_store(self) -> str | None:
        """Check a shared store at start: refuse one whose schema this client cannot use (raises
        ``StoreVersionError``); a store out of reach is no reason not to start (its spans are held until it
        answers): a one-line warning for it, else None."""
        if self.store is None or not self.store.capabilities.shared:
            return None
        try:
            self.store.open()
        except BackendUnavailable as exc:
            return f"warning: {exc.message}; traces are held until it answers"
        finally:
            for exporter in self.exporters:
                if isinstance(exporter, BufferedStoreExporter):
                    exporter.recover()  # what a killed process of this home spilled: written now, or held
        return None

    def store_status(self) -> dict[str, object] | None:
        """The trace store's export counters (None without a store): where, spans stored, dropped and held."""
        for exporter in self.exporters:
            if isinstance(exporter, (StoreSpanExporter, BufferedStoreExporter)):
                stats = exporter.stats()
                held = exporter.held if isinstance(exporter, BufferedStoreExporter) else 0
                return {"store": exporter.store.location, "exportedSpans": stats.exported_spans,
                        "droppedSpans": stats.dropped_spans, "heldSpans": held,
                        "droppedByReason": {k.value: n for k, n in sorted(stats.by_reason.items())}}
        return None


def _count_never_exported(exporter: StoreSpanExporter | BufferedStoreExporter, processor: CountedProcessor) -> None:
    """Once everything is flushed, every span the exporter took in was stored, dropped (counted) or kept in the
    spill file; the spans that ended and are none of these never reached it (the SDK's batch processor drops
    the oldest span when its queue is full, without a count): counted as lost."""
    stats = exporter.stats()
    recovered, kept = (exporter.recovered, exporter.kept_at_exit) if isinstance(exporter, BufferedStoreExporter) \
        else (0, 0)
    exporter.lost(processor.ended + recovered - stats.exported_spans - stats.dropped_spans - kept,
                  FailureKind.QUEUE_FULL)


def attribute_limit(capture: CaptureConfig) -> int:
    """Attributes the busiest span (rerank: input and output documents) needs, plus headroom."""
    per_document = 3 if capture.capture_content else 2
    return 2 * per_document * capture.max_candidates + 64


def make_tracer_provider(home: Home, settings: TraceSettings | None = None
                         ) -> tuple[TracerProvider, TraceHandles]:
    """A TracerProvider exporting to the local store and/or OTLP, each through its own batch processor.

    Nothing is opened here: the store connects on its first export, in the processor's thread.
    """
    settings = settings or TraceSettings.resolve()
    # No shutdown at interpreter exit: it would wait on a dead collector; commands call close().
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: settings.service_name}),
                              span_limits=SpanLimits(max_span_attributes=settings.max_span_attributes),
                              shutdown_on_exit=False)
    store: TraceStoreProtocol | None = None
    exporters: list[StoreSpanExporter | BufferedStoreExporter | SafeExporter] = []
    sinks = LossSinks(LossLedger(home.trace_losses), DropLog())  # counted where `traces status` reads
    if settings.store:
        store = open_trace_store(home.traces, settings.store_url)
        exporters.append(BufferedStoreExporter(store, capacity=settings.store_buffer, sinks=sinks,
                                               spill=SpillFile(spill_folder(home.trace_spill, store.location),
                                                                 settings.spill_bytes))
                         if store.capabilities.shared
                         else StoreSpanExporter(store, retry_s=settings.store_retry_s, sinks=sinks))
    deferred = DeferredAttributes(consumers=int(store is not None) + int(settings.otlp))
    processors: list[CountedProcessor] = []
    if exporters:
        timeout_ms = store.capabilities.write_timeout_ms if store is not None else 30_000
        processors.append(CountedProcessor(BatchSpanProcessor(
            MaterializingExporter(exporters[-1], deferred), schedule_delay_millis=settings.schedule_delay_ms,
            max_queue_size=settings.max_queue_size, export_timeout_millis=timeout_ms)))
        provider.add_span_processor(processors[-1])
    if settings.otlp:
        # the OTLP exporter reads the process's variables itself, so its name does too
        endpoint = next((_without_userinfo(url) for k in OTLP_ENDPOINT_VARS if (url := text(os.environ, k))),
                        "default endpoint")
        otlp = MaterializingExporter(OpenInferenceExporter(_otlp_exporter(settings.protocol)), deferred)
        exporters.append(SafeExporter(otlp, f"otlp {settings.protocol.value} {endpoint}", sinks=sinks))
        # SDK 1.45 ignores export_timeout_millis; the OTLP exporter's own timeout
        # (OTEL_EXPORTER_OTLP_TIMEOUT, 10 s) bounds each export, SafeExporter's cooldown the rest.
        processors.append(CountedProcessor(BatchSpanProcessor(exporters[-1], max_queue_size=settings.max_queue_size,
                                                              export_timeout_millis=10_000)))
        provider.add_span_processor(processors[-1])
    return provider, TraceHandles(provider, store, tuple(exporters), deferred, tuple(processors))


def _otlp_exporter(protocol: OtlpProtocol) -> SpanExporter:
    # Imported here: requests and grpc are heavy and only needed when OTLP is on.
    if protocol is OtlpProtocol.GRPC:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # type: ignore[assignment]
    return OTLPSpanExporter()


def _without_userinfo(url: str) -> str:
    # The name shows up in warnings: never log credentials embedded in the endpoint URL.
    parts = urlsplit(url)
    if "@" not in parts.netloc or not parts.hostname:
        return url
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit(parts._replace(netloc=f"{parts.hostname}{port}"))


def _otlp_default(env: Mapping[str, str]) -> bool:
    exporters = text(env, names.OTEL_TRACES_EXPORTER)
    if exporters:  # the standard switch, when set, decides
        return "otlp" in [e.strip().lower() for e in exporters.split(",")]
    return any(text(env, k) for k in OTLP_ENDPOINT_VARS)


def _protocol(value: str | None, env: Mapping[str, str]) -> OtlpProtocol:
    """The protocol the argument names, else the first protocol variable set (the traces one wins), else the default."""
    if not value:
        from_env = (choice(env, k, OtlpProtocol) for k in OTLP_PROTOCOL_VARS)
        return next((p for p in from_env if p is not None), OtlpProtocol.HTTP_PROTOBUF)
    try:
        return OtlpProtocol(value.strip().lower())
    except ValueError:
        allowed = ", ".join(p.value for p in OtlpProtocol)
        raise ConfigError(f"OTLP protocol must be one of {allowed}, got {value!r}", field="protocol") from None

