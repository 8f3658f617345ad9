"""Emulated searches for the trace tests: a ``search`` root span and its ten stage spans.

Built with the real SDK and the real attribute builders, at fixed times, so the
tests can pin ids, durations and attributes without the retriever or the model.
"""

from __future__ import annotations

from dataclasses import dataclass

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import Status, StatusCode

from searchtrace.names import Stage
from searchtrace.traces import attributes as attrs
from searchtrace.traces import vocabulary as v
from searchtrace.traces.spans.attributes import CaptureConfig

STAGES = [Stage.VALIDATE, Stage.REWRITE, Stage.EMBED, Stage.DENSE, Stage.KEYWORD, Stage.GRAPH,
          Stage.FUSE, Stage.RERANK, Stage.FILTER, Stage.SHAPE]
T0 = 1_700_000_000_000_000_000  # 2023-11-14T22:13:20Z
MS = 1_000_000


@dataclass(frozen=True)
class FakeSearch:
    """What one emulated search looks like; each stage lasts ``stage_ms``."""

    query: str = "Which river runs past the harbour town?"
    mode: str = "graph"
    results: tuple[tuple[str, str, float], ...] = (("d1", "high", 0.81), ("d2", "medium", 0.52), ("d3", "low", 0.2))
    no_confident: bool = False
    degraded: tuple[str, ...] = ()
    run_id: str | None = None
    query_id: str | None = None
    error_code: str | None = None
    start_ns: int = T0
    stage_ms: float = 2.0
    candidates: int = 5
    source: str | None = None
    dataset: str | None = None

    @property
    def end_ns(self) -> int:
        return self.start_ns + int(len(STAGES) * self.stage_ms * MS) + 2000


def emulate_search(tracer: trace.Tracer, s: FakeSearch, capture: CaptureConfig = CaptureConfig()) -> str:
    """Record one search's spans; returns its trace id (32 hex)."""
    root = tracer.start_span(v.SEARCH_SPAN, start_time=s.start_ns, attributes=attrs.span_kind(v.SEARCH_SPAN))
    root.set_attributes(attrs.request(s.query, s.mode, 3, s.candidates, 2 if s.mode == "graph" else 0, capture))
    root.set_attributes(attrs.eval_context(s.run_id, s.query_id))
    if s.source is not None and s.dataset is not None:  # as the retriever opens its search span
        root.set_attributes(attrs.origin(s.source, s.dataset))
    ctx = trace.set_span_in_context(root)
    stages = STAGES[:1] if s.error_code else STAGES
    for i, name in enumerate(stages):
        start = s.start_ns + 1000 + int(i * s.stage_ms * MS)
        span = tracer.start_span(name.value, context=ctx, start_time=start, attributes=attrs.span_kind(name.value))
        span.set_attributes(_stage_attributes(name, s, capture))
        if name.value in s.degraded:
            span.add_event("exception", {"exception.type": "TimeoutError", "exception.message": "too slow"},
                           timestamp=start + 10)
            span.set_status(Status(StatusCode.ERROR, "too slow"))
        span.end(end_time=start + int(s.stage_ms * MS))
    if s.error_code:
        root.set_status(Status(StatusCode.ERROR, "invalid request"))
        root.set_attribute(v.ERROR_CODE, s.error_code)
    else:
        root.set_attributes(_outcome(s))
    root.end(end_time=s.end_ns)
    return format(root.get_span_context().trace_id, "032x")


def _ids(s: FakeSearch, stage: str) -> tuple[list[str], list[float]]:
    ids = [r[0] for r in s.results] + [f"{stage}-{i}" for i in range(s.candidates - len(s.results))]
    return ids, [1.0 - i / 10 for i in range(len(ids))]


def _stage_attributes(name: Stage, s: FakeSearch, capture: CaptureConfig) -> dict:
    ids, scores = _ids(s, name.value)
    if name is Stage.REWRITE:
        return attrs.rewrite(["Harbour Town"], ["river"])
    if name is Stage.EMBED:
        return {v.EMBEDDING_MODEL_NAME: "all-MiniLM-L6-v2"}
    if name in (Stage.DENSE, Stage.KEYWORD, Stage.GRAPH):
        return attrs.candidates(ids, scores, capture)
    if name is Stage.FUSE:
        return {**attrs.fusion("rrf", 60, {"dense": 1.0, "keyword": 1.0}), **attrs.candidates(ids, scores, capture)}
    if name is Stage.RERANK:
        return attrs.rerank("identity", 3, ids, scores, ids[:3], scores[:3], capture)
    if name is Stage.FILTER:
        return attrs.filtered(["min_relevance"], ids[3:], capture)
    return {}


def _outcome(s: FakeSearch) -> dict:
    """The root's outcome attributes of a fake search, built as the retriever builds them."""
    hints = (["Harbour Town"], ["river"], "river harbour town", "harbour") if s.no_confident else None
    return attrs.outcome([i for i, _, _ in s.results], [b for _, b, _ in s.results], [r for _, _, r in s.results],
                         max((r for _, _, r in s.results), default=0.0), s.no_confident, list(s.degraded), hints)


def record(*searches: FakeSearch, capture: CaptureConfig = CaptureConfig(),
           id_generator: IdGenerator | None = None) -> tuple[list[ReadableSpan], list[str]]:
    """Finished spans of the given searches (children before each root) and their trace ids."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024), id_generator=id_generator)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("searchtrace")
    ids = [emulate_search(tracer, s, capture) for s in searches]
    provider.shutdown()
    return list(exporter.get_finished_spans()), ids


# -- served traffic: searches and the fetches that follow them (implicit judgments) --------


@dataclass(frozen=True)
class Served:
    """A served search (``shown`` its results in order) or, with ``fetched``, a served fetch, as
    ``searchtrace serve`` records them: a SERVER span, over a ``search`` span for a search."""

    start_ns: int
    shown: tuple[str, ...] = ()
    query: str | None = "Which river runs past the harbour town?"
    fetched: tuple[str, ...] = ()
    follows: str | None = None
    session: str | None = None
    source: str = "mcp"
    dataset: str = "sample"
    failed: bool = False


def emulate_served(tracer: trace.Tracer, s: Served) -> str:
    """Record one served request's spans; returns its trace id."""
    from opentelemetry.trace import SpanKind

    tool = "get_docs" if s.fetched else "search"
    name = f"tools/call {tool}" if s.source == "mcp" else ("GET /v1/docs" if s.fetched else "POST /v1/search")
    root = tracer.start_span(name, kind=SpanKind.SERVER, start_time=s.start_ns,
                             attributes={v.SOURCE: s.source, **attrs.session(s.session)})
    if s.failed:
        root.set_status(Status(StatusCode.ERROR, "failed"))
        root.set_attribute(v.ERROR_CODE, "NOT_FOUND")
    elif s.fetched:
        root.set_attributes(attrs.fetch(s.dataset, s.fetched, s.follows))
    else:
        search = tracer.start_span(v.SEARCH_SPAN, context=trace.set_span_in_context(root), start_time=s.start_ns + 10)
        search.set_attributes(attrs.origin(s.source, s.dataset))
        if s.query is not None:
            search.set_attribute(v.INPUT_VALUE, s.query)
        search.set_attributes(attrs.outcome(list(s.shown), ["high"] * len(s.shown), [0.5] * len(s.shown), 0.5,
                                            False, [], None))
        search.end(end_time=s.start_ns + MS)
    root.end(end_time=s.start_ns + 2 * MS)
    return format(root.get_span_context().trace_id, "032x")


def record_served(*requests: Served) -> tuple[list[ReadableSpan], list[str]]:
    """Finished spans of the given served requests and their trace ids."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("searchtrace")
    ids = [emulate_served(tracer, r) for r in requests]
    provider.shutdown()
    return list(exporter.get_finished_spans()), ids
