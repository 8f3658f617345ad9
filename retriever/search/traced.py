"""One search's stages, each in its own span, and the span helper they open them with.

The span helper: every search opens eleven spans, so it is on the search's hot
path. A stage span is started with an explicit parent (never made current:
nothing nests in it), with the attributes known up front passed at creation,
and ended by a plain context-manager object rather than a generator; its
attributes are built by a pure builder (``traces.attributes``) whose
parameters mypy checks at every call, now or at export (``traces.deferred``).

The stages: a stage whose fusion weight is 0 is skipped (its span says so); a
retrieval stage that fails is recorded on its span and skipped ("degraded"),
so the others still answer. The retrieval logic itself lives in
``retriever.stages``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Any, Literal, TypeVarTuple

import numpy as np
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Status, StatusCode

from searchtrace.names import FUSED_STAGES, Stage
from searchtrace.retriever.config.model import RetrieverConfig
from searchtrace.retriever.index import OpenIndex
from searchtrace.retriever.request import SearchRequest, validate_request
from searchtrace.retriever.response import RelationHit, Result, SearchResponse
from searchtrace.retriever.search import confidence as conf
from searchtrace.retriever.stages.dense import dense
from searchtrace.retriever.stages.embed import embed
from searchtrace.retriever.stages.feedback import feedback_dense
from searchtrace.retriever.stages.fuse import best_ids, fuse
from searchtrace.retriever.stages.graph import GraphResult, graph
from searchtrace.retriever.stages.keyword import KeywordResult, keyword
from searchtrace.retriever.stages.rerank import Reranker
from searchtrace.retriever.stages.rewrite import Rewrite, rewrite
from searchtrace.retriever.types import Candidates, Fused, FusionMethod, GraphMethod
from searchtrace.retriever.vectorstore.base import PayloadFilter
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


def trace_id(span: trace.Span) -> str:
    """The span's trace id as 32 hex digits ("" for a non-recording span)."""
    ctx = span.get_span_context()
    return format(ctx.trace_id, "032x") if ctx.is_valid else ""


log = logging.getLogger(__name__)

SKIP_REASON = "fusion weight 0"


def payloads(index: OpenIndex, ids: list[str]) -> dict[str, Mapping[str, Any]]:
    """Stored payloads of the known ``ids``, by id."""
    points = [index.point_of[i] for i in ids if i in index.point_of]
    return {p["id"]: p for _, p, _ in index.store.retrieve(points)}


def query_evidence(dense_found: Candidates | None, keyword_found: KeywordResult | None) -> conf.QueryEvidence:
    """What the relevance model reads about the query as a whole, from the dense and keyword stages."""
    return conf.QueryEvidence(
        dense_floor=float(dense_found.scores[-1]) if dense_found is not None and len(dense_found) else 0.0,
        keyword_max=keyword_found.max_score if keyword_found else 0.0,
        unknown_share=keyword_found.unknown_share if keyword_found else 0.0,
    )



def record_outcome(span: trace.Span, response: SearchResponse, deferred: DeferredAttributes | None) -> None:
    """Record on the root span what the search answered (its results' ids, bands and relevance, hints)."""
    record(span, attrs.outcome, *_outcome(response), deferred=deferred)


def _outcome(response: SearchResponse) -> tuple[list[str], list[str], list[float], float, bool, tuple[str, ...],
                                                 attrs.RetryValues | None, list[str], list[attrs.RelationValues]]:
    """What the root span records of a response, in the parameters of :func:`traces.attributes.outcome`."""
    results, hints = response.results, response.retry_hints
    retry = (None if hints is None else
             (hints.detected_entities, hints.related_terms, hints.narrower_query, hints.broader_query))
    relations = [(r.id, r.subject, r.relation, r.object) for r in results if isinstance(r, RelationHit)]
    return ([r.id for r in results], [r.band.value for r in results], [float(r.score) for r in results],
            response.best_score, response.no_confident_results, response.degraded, retry,
            [r.title if isinstance(r, Result) else "" for r in results], relations)


@dataclass(frozen=True)
class TracedStages:
    """The stages of one search over ``index``, each opening its span through ``spans``.

    Attributes:
        spans: the search's stage spans (also collects degraded stages).
        index: the open index.
        embedder: has ``encode_query(text) -> np.ndarray`` and ``model_id``.
        config: retriever configuration.
        capture: trace privacy switches.
        parts_weight: dense blend weight of passage parts (0 for an index without parts).
    """

    spans: StageSpans
    index: OpenIndex
    embedder: Any
    config: RetrieverConfig
    capture: attrs.CaptureConfig
    parts_weight: float

    def validate(self, request: Mapping[str, Any] | SearchRequest) -> SearchRequest:
        """The request, validated under the validate span (a ValidationError marks it and the search)."""
        with self.spans.stage(Stage.VALIDATE):
            return validate_request(request)

    def rewrite(self, req: SearchRequest, use_graph: bool) -> Rewrite:
        with self.spans.stage(Stage.REWRITE) as span:
            try:
                rw = rewrite(req.query, self.index.graph if use_graph else None)
            except Exception as exc:
                self._degrade(span, Stage.REWRITE, exc)
                rw = rewrite(req.query, None)
            self.spans.record(span, attrs.rewrite, [e.name for e in rw.entities], rw.rewrite_terms)
        return rw

    def embed(self, rw: Rewrite, query_vector: np.ndarray | None) -> np.ndarray | None:
        f = self.config.fusion
        if not f.enabled(Stage.DENSE) and f.method is not FusionMethod.KEYWORD_THEN_DENSE:
            with self.spans.skipped(Stage.EMBED, SKIP_REASON):
                return None
        model = {v.EMBEDDING_MODEL_NAME: getattr(self.embedder, "model_id", "unknown")}
        with self.spans.stage(Stage.EMBED, model) as span:
            if query_vector is not None:
                span.set_attribute(v.EMBED_PRECOMPUTED, True)
                return query_vector
            return embed(self.embedder, rw.query)

    def dense(self, vector: np.ndarray | None, limit: int, flt: PayloadFilter | None) -> Candidates | None:
        if not self.config.fusion.enabled(Stage.DENSE) or vector is None:
            with self.spans.skipped(Stage.DENSE, SKIP_REASON):
                return None
        with self.spans.stage(Stage.DENSE) as span:
            try:
                found = dense(self.index.store, vector, limit, self.index.doc_ids, flt, self.parts_weight,
                              self.config.dense.parts_depth, self.index.vectors)
            except Exception as exc:
                self._degrade(span, Stage.DENSE, exc)
                return None
            span.set_attribute(v.DENSE_PARTS_WEIGHT, self.parts_weight)
            self._record_candidates(span, found)
            return found

    def keyword(self, rw: Rewrite, limit: int, flt: PayloadFilter | None, use_graph: bool) -> KeywordResult | None:
        if not self.config.fusion.enabled(Stage.KEYWORD):
            with self.spans.skipped(Stage.KEYWORD, SKIP_REASON):
                return None
        with self.spans.stage(Stage.KEYWORD) as span:
            text = rw.keyword_query if use_graph else rw.query
            try:
                found = keyword(self.index.store, self.index.bm25, self.index.term_stats, text, limit,
                                self.index.doc_ids, flt)
            except Exception as exc:
                self._degrade(span, Stage.KEYWORD, exc)
                return None
            self._record_candidates(span, found.candidates)
            return found

    def graph(self, rw: Rewrite, depth: int, limit: int, first: Sequence[Candidates | None] = ()) -> GraphResult:
        """The graph stage; ``first``: the dense and keyword lists, whose fusion names the seed passages."""
        if depth > 0 and not self.config.fusion.enabled(Stage.GRAPH):
            with self.spans.skipped(Stage.GRAPH, SKIP_REASON):
                return GraphResult.empty()
        with self.spans.stage(Stage.GRAPH, {v.DEPTH: depth}) as span:
            seed_docs = self._seed_docs(first) if depth > 0 else []
            if depth == 0 or self.index.graph is None or not (rw.entities or seed_docs):
                return GraphResult.empty()
            span.set_attribute(v.GRAPH_METHOD, self.config.graph.method.value)
            span.set_attribute(v.GRAPH_SEED_DOCS, seed_docs)
            try:
                g = graph(self.index.graph, [e.key for e in rw.entities], depth, limit, self.config.graph, rw.query,
                          seed_docs)
            except Exception as exc:
                self._degrade(span, Stage.GRAPH, exc)
                return GraphResult.empty()
            self._record_candidates(span, g.docs)
            span.set_attribute(v.GRAPH_HITS, len(g.hits))
            return g

    def _seed_docs(self, first: Sequence[Candidates | None]) -> list[str]:
        """The best ``graph.seed_docs`` ids of the dense and keyword lists fused (ppr, weight > 0 only)."""
        g = self.config.graph
        lists = [c for c in first if c is not None and len(c)]
        if g.seed_docs == 0 or g.seed_docs_weight == 0 or not lists or g.method is not GraphMethod.PPR:
            return []
        return self._first_pass(lists, g.seed_docs)

    def _first_pass(self, lists: list[Candidates], n: int) -> list[str]:
        """The first ``n`` ids the configured fusion gives ``lists`` (feedback and graph seed passages);
        keyword-then-dense, which needs cosines no stage has yet, ranks by RRF here."""
        f = self.config.fusion
        if f.method is FusionMethod.KEYWORD_THEN_DENSE:
            f = replace(f, method=FusionMethod.RRF)
        return best_ids(lists, f, n)

    def feedback(self, vector: np.ndarray, first: Candidates, lists: list[Candidates], limit: int,
                 flt: PayloadFilter | None) -> tuple[Candidates, list[Candidates]]:
        """Pseudo-relevance feedback: a second dense search from the first fusion's top documents.

        Returns the dense list now in force and the lists to fuse; a failure keeps the first ones.
        """
        with self.spans.stage(Stage.FEEDBACK) as span:
            try:
                top = self._first_pass(lists, self.config.feedback.docs)
                found, used = feedback_dense(self.index.store, vector, top,
                                             self.config.feedback, limit, self.index.doc_ids, self.index.point_of,
                                             flt, self.parts_weight, self.config.dense.parts_depth,
                                             self.index.vectors)
            except Exception as exc:
                self._degrade(span, Stage.FEEDBACK, exc)
                return first, lists
            span.set_attributes({v.FEEDBACK_IDS: list(used), v.FEEDBACK_WEIGHT: self.config.feedback.weight})
            self.spans.record(span, attrs.candidates, found.ids, found.scores, self.capture)
        kept = [found if c.stage is Stage.DENSE else c for c in lists]
        return found, [c for c in kept if len(c)]

    def fuse(self, lists: list[Candidates], vector: np.ndarray | None) -> Fused:
        with self.spans.stage(Stage.FUSE) as span:
            fused = fuse(lists, self.config.fusion, self._dense_of(lists, vector))
            f = self.config.fusion
            self.spans.record(span, attrs.fusion, f.method.value, f.k0, {s.value: f.weight(s) for s in FUSED_STAGES})
            self.spans.record(span, attrs.candidates, fused.ids, fused.scores, self.capture)
        return fused

    def rerank(self, reranker: Reranker, query: str, fused: Fused, top_k: int) -> Fused:
        with self.spans.stage(Stage.RERANK) as span:
            reranked = reranker.rerank(query, fused, top_k)
            self.spans.record(span, attrs.rerank, reranker.name, top_k, fused.ids, fused.scores,
                              reranked.ids, reranked.scores, self.capture)
        return reranked

    def _dense_of(self, lists: list[Candidates], vector: np.ndarray | None) -> dict[str, float] | None:
        """Cosines of the keyword candidates, for keyword-then-dense fusion only."""
        if self.config.fusion.method is not FusionMethod.KEYWORD_THEN_DENSE or vector is None:
            return None
        keyword_ids: Sequence[str] | np.ndarray = next((c.ids for c in lists if c.stage is Stage.KEYWORD), [])
        points = [self.index.point_of[i] for i in keyword_ids]
        rows = self.index.store.retrieve(points, with_vectors=True)
        return {p["id"]: float(vec @ vector) for _, p, vec in rows if vec is not None}

    def _record_candidates(self, span: trace.Span, found: Candidates) -> None:
        self.spans.record(span, attrs.candidates, found.ids, found.scores, self.capture, self._contents(found.ids))

    def _contents(self, ids: Sequence[str] | np.ndarray) -> list[str] | None:
        """Texts of the recorded candidates, fetched only when content capture is on."""
        if not self.capture.capture_content:
            return None
        head = [str(i) for i in ids[: self.capture.max_candidates]]
        found = payloads(self.index, head)
        return [found.get(i, {}).get("text", "") for i in head]

    def _degrade(self, span: trace.Span, stage: Stage, exc: Exception) -> None:
        """Record a failed stage on its span and in ``degraded``; the search goes on without it."""
        log.warning("%s stage failed, skipped: %s", stage.value, exc)
        span.record_exception(exc)
        span.set_status(Status(StatusCode.ERROR, str(exc)))
        self.spans.degraded.append(stage.value)
