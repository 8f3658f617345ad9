"""The search pipeline: composes the stages, one OpenTelemetry span each.

validate -> rewrite -> embed -> dense -> keyword -> graph -> [feedback] -> fuse ->
rerank -> filter -> shape. A stage whose fusion weight is 0 is skipped (its span
says so); feedback runs only when configured. The pipeline holds no retrieval logic of its own: each stage
lives in ``retriever.stages``; relevance and bands in ``retriever.confidence``;
retry hints in ``retriever.retry_hints``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from retriever import confidence as conf
from retriever._spans import StageSpans, record, record_snapshot, trace_id
from retriever.config import RetrieverConfig
from retriever.errors import BackendUnavailable, NotFoundError, SearchtraceError
from retriever.index import OpenIndex
from retriever.request import SearchRequest
from retriever.retry_hints import retry_hints
from retriever.stages import shape as shaping
from retriever.stages.dense import dense
from retriever.stages.embed import embed
from retriever.stages.feedback import feedback_dense
from retriever.stages.filter import apply_filters, payload_filter
from retriever.stages.fuse import fuse
from retriever.stages.graph import GraphResult, graph
from retriever.stages.keyword import KeywordResult, keyword
from retriever.stages.rerank import IdentityReranker, Reranker
from retriever.stages.rewrite import Rewrite, rewrite
from retriever.stages.validate import validate_request
from retriever.types import Candidates, FusionMethod, Mode, Stage
from traces import attributes as attrs
from traces import vocabulary as v
from traces.vocabulary import SpanName

log = logging.getLogger(__name__)

SKIP_REASON = "fusion weight 0"


@dataclass(frozen=True)
class SearchDetail:
    """What an evaluation needs beyond the response.

    Attributes:
        stage_ids: each retrieval stage's candidate ids, best first.
        fused_ids: the fused (and reranked) list, before any filter.
        dropped_ids: ids the filter stage removed.
        ranking: the kept ids in final order (deeper than top_k: up to all candidates).
        ranking_scores: fused scores of ``ranking``.
        relevance: relevance (0-1) of ``ranking``.
        features: relevance-model features of ``ranking`` (rows x ``confidence.FEATURES``).
    """

    stage_ids: dict[str, tuple[str, ...]]
    fused_ids: tuple[str, ...]
    dropped_ids: tuple[str, ...]
    ranking: tuple[str, ...]
    ranking_scores: tuple[float, ...]
    relevance: tuple[float, ...]
    features: np.ndarray


class Retriever:
    """Staged hybrid + knowledge-graph search over an open index.

    Args:
        index: an open index (``retriever.index.open_index``).
        embedder: has ``encode_query(text) -> np.ndarray``.
        config: retriever configuration.
        tracer: OpenTelemetry tracer; defaults to the global provider's.
        relevance: relevance model; defaults to the calibration file in
            ``config.confidence`` if set, else similarity-based.
        reranker: defaults to identity.
        capture: trace privacy switches.
        deferred: ``traces.deferred.DeferredAttributes`` of the tracer provider
            (``TraceHandles.deferred``): heavy attributes are then built at export.
    """

    def __init__(self, index: OpenIndex, embedder, config: RetrieverConfig | None = None, *,
                 tracer: trace.Tracer | None = None, relevance: conf.RelevanceModel | None = None,
                 reranker: Reranker | None = None, capture: attrs.CaptureConfig | None = None,
                 deferred=None) -> None:
        self.index = index
        self.embedder = embedder
        self.config = config or RetrieverConfig()
        self.tracer = tracer or trace.get_tracer("searchtrace")
        if relevance is None and self.config.confidence.calibration_path:
            relevance = conf.load_calibration(self.config.confidence.calibration_path)
        self.relevance = relevance or conf.SimilarityRelevance()
        self.reranker = reranker or IdentityReranker()
        self.capture = capture or attrs.CaptureConfig()
        self.deferred = deferred
        # an index built without passage parts searches by the passage vector alone
        self._parts_weight = self.config.dense.parts_weight if index.manifest.parts else 0.0

    # -- public API --------------------------------------------------------

    def default_mode(self) -> Mode:
        return Mode.GRAPH if self.index.graph is not None else Mode.FAST

    def search(self, request: Mapping[str, Any] | SearchRequest, *, query_vector: np.ndarray | None = None,
               run_id: str | None = None, query_id: str | None = None) -> dict:
        """Run one search. Returns the response, or ``{"error": {...}}``; never raises for bad input."""
        return self.search_detailed(request, query_vector=query_vector, run_id=run_id, query_id=query_id)[0]

    def search_detailed(self, request: Mapping[str, Any] | SearchRequest, *, query_vector: np.ndarray | None = None,
                        run_id: str | None = None, query_id: str | None = None) -> tuple[dict, SearchDetail | None]:
        """:meth:`search`, plus what an evaluation needs: every stage's candidates and the full ranking.

        The detail is ``None`` when the search returned an error.
        """
        with self.tracer.start_as_current_span(SpanName.SEARCH.value, attributes=attrs.span_kind(SpanName.SEARCH),
                                               record_exception=False, set_status_on_exception=False) as root:
            record(root, attrs.eval_context, run_id, query_id)
            try:
                response, detail = self._search(request, root, query_vector)
            except SearchtraceError as exc:
                root.set_status(Status(StatusCode.ERROR, exc.message))
                root.set_attribute(v.ERROR_CODE, exc.code.value)
                return exc.to_dict(), None
            except Exception as exc:  # a bug or an unexpected backend failure: report, never crash
                log.exception("search failed")
                root.record_exception(exc)
                root.set_status(Status(StatusCode.ERROR, str(exc)))
                root.set_attribute(v.ERROR_CODE, "SEARCH_ERROR")
                return {"error": {"code": "SEARCH_ERROR", "message": f"search failed: {exc}", "field": None}}, None
            record_snapshot(root, attrs.outcome, response, deferred=self.deferred)  # the caller owns the response
            return response, detail

    def get_docs(self, ids: list[str]) -> list[dict]:
        """Documents by id, in the order asked. Raises NotFoundError naming unknown ids."""
        payloads = self._payloads(ids)
        missing = [i for i in ids if i not in payloads]
        if missing:
            raise NotFoundError(f"unknown document ids: {', '.join(missing[:20])}", field="ids")
        return [{"id": i, "title": payloads[i].get("title", ""), "text": payloads[i].get("text", ""),
                 "metadata": shaping.metadata(payloads[i])} for i in ids]

    def get_chunks(self, ids: list[str]) -> list[dict]:
        """Chunks by id (one chunk per document in this index), shaped like results."""
        docs = self.get_docs(ids)
        return [{"id": d["id"], "content": f"{d['title']}\n{d['text']}" if d["title"] else d["text"],
                 "component_type": "chunk", "metadata": d["metadata"]} for d in docs]

    # -- stages ------------------------------------------------------------

    def _payloads(self, ids: list[str]) -> dict[str, Mapping[str, Any]]:
        points = [self.index.point_of[i] for i in ids if i in self.index.point_of]
        return {p["id"]: p for _, p, _ in self.index.store.retrieve(points)}

    def _search(self, request, root: trace.Span, query_vector) -> tuple[dict, SearchDetail]:
        spans = StageSpans(self.tracer, trace.set_span_in_context(root), self.deferred)
        with spans.stage(SpanName.VALIDATE):
            req = validate_request(request)
        mode = req.mode or self.default_mode()
        use_graph = mode is Mode.GRAPH and self.index.graph is not None
        depth = 0 if mode is Mode.FAST else (req.depth if req.depth is not None else self.config.graph.depth)
        spans.record(root, attrs.request, req.query, mode.value, req.top_k, req.candidates, depth, self.capture)

        rw = self._rewrite(spans, req, use_graph)
        vector = self._embed(spans, rw, query_vector)
        flt = payload_filter(req)
        flt = None if flt.is_empty() else flt
        dense_found = self._dense(spans, vector, req.candidates, flt)
        keyword_found = self._keyword(spans, rw, req.candidates, flt, use_graph)
        g = self._graph(spans, rw, depth if use_graph else 0, req.candidates)
        if dense_found is None and keyword_found is None:
            raise BackendUnavailable("no dense or keyword search ran: " + ", ".join(spans.degraded) + " failed")
        lists = [c for c in (dense_found, keyword_found and keyword_found.candidates, g.docs) if c is not None and len(c)]
        if self.config.feedback.enabled and dense_found is not None and len(dense_found):
            dense_found, lists = self._feedback(spans, vector, dense_found, lists, req.candidates, flt)
        evidence = conf.QueryEvidence(
            dense_floor=float(dense_found.scores[-1]) if dense_found is not None and len(dense_found) else 0.0,
            keyword_max=keyword_found.max_score if keyword_found else 0.0,
            unknown_share=keyword_found.unknown_share if keyword_found else 0.0,
        )

        with spans.stage(SpanName.FUSE) as span:
            fused = fuse(lists, self.config.fusion, self._dense_of(lists, vector))
            f = self.config.fusion
            spans.record(span, attrs.fusion, f.method.value, f.k0, {s.value: f.weight(s) for s in Stage
                                                                   if s in (Stage.DENSE, Stage.KEYWORD, Stage.GRAPH)})
            spans.record(span, attrs.candidates, fused.ids, fused.scores, self.capture)
        with spans.stage(SpanName.RERANK) as span:
            reranked = self.reranker.rerank(rw.query, fused, req.top_k)
            spans.record(span, attrs.rerank, self.reranker.name, req.top_k, fused.ids, fused.scores,
                                             reranked.ids, reranked.scores, self.capture)
        return self._filter_and_shape(spans, req, mode, rw, g, reranked, lists, evidence, root)

    def _feedback(self, spans: StageSpans, vector, first: Candidates, lists: list[Candidates], limit: int, flt):
        """Pseudo-relevance feedback: a second dense search from the first fusion's top documents.

        Returns the dense list now in force and the lists to fuse; a failure keeps the first ones.
        """
        with spans.stage(SpanName.FEEDBACK) as span:
            try:
                found, used = feedback_dense(self.index.store, vector, fuse(lists, self.config.fusion),
                                             self.config.feedback, limit, self.index.doc_ids, self.index.point_of, flt,
                                             self._parts_weight, self.config.dense.parts_depth, self.index.vectors)
            except Exception as exc:
                self._degrade(spans, span, Stage.FEEDBACK, exc)
                return first, lists
            span.set_attributes({v.FEEDBACK_IDS: list(used), v.FEEDBACK_WEIGHT: self.config.feedback.weight})
            spans.record(span, attrs.candidates, found.ids, found.scores, self.capture)
        kept = [found if c.stage is Stage.DENSE else c for c in lists]
        return found, [c for c in kept if len(c)]

    def _dense_of(self, lists: list[Candidates], vector) -> dict[str, float] | None:
        """Cosines of the keyword candidates, for keyword-then-dense fusion only."""
        if self.config.fusion.method is not FusionMethod.KEYWORD_THEN_DENSE or vector is None:
            return None
        keyword_ids = next((c.ids for c in lists if c.stage is Stage.KEYWORD), [])
        points = [self.index.point_of[i] for i in keyword_ids]
        rows = self.index.store.retrieve(points, with_vectors=True)
        return {p["id"]: float(vec @ vector) for _, p, vec in rows if vec is not None}

    def _rewrite(self, spans: StageSpans, req: SearchRequest, use_graph: bool) -> Rewrite:
        with spans.stage(SpanName.REWRITE) as span:
            try:
                rw = rewrite(req.query, self.index.graph if use_graph else None)
            except Exception as exc:
                self._degrade(spans, span, Stage.REWRITE, exc)
                rw = rewrite(req.query, None)
            spans.record(span, attrs.rewrite, [e.name for e in rw.entities], rw.rewrite_terms)
        return rw

    def _embed(self, spans: StageSpans, rw: Rewrite, query_vector) -> np.ndarray | None:
        f = self.config.fusion
        if not f.enabled(Stage.DENSE) and f.method is not FusionMethod.KEYWORD_THEN_DENSE:
            with spans.skipped(SpanName.EMBED, SKIP_REASON):
                return None
        with spans.stage(SpanName.EMBED, {v.EMBEDDING_MODEL_NAME: getattr(self.embedder, "model_id", "unknown")}) as span:
            if query_vector is not None:
                span.set_attribute(v.EMBED_PRECOMPUTED, True)
                return query_vector
            return embed(self.embedder, rw.query)

    def _dense(self, spans: StageSpans, vector, limit: int, flt) -> Candidates | None:
        if not self.config.fusion.enabled(Stage.DENSE):
            with spans.skipped(SpanName.DENSE, SKIP_REASON):
                return None
        with spans.stage(SpanName.DENSE) as span:
            try:
                found = dense(self.index.store, vector, limit, self.index.doc_ids, flt, self._parts_weight,
                              self.config.dense.parts_depth, self.index.vectors)
            except Exception as exc:
                return self._degrade(spans, span, Stage.DENSE, exc)
            span.set_attribute(v.DENSE_PARTS_WEIGHT, self._parts_weight)
            spans.record(span, attrs.candidates, found.ids, found.scores, self.capture, self._contents(found.ids))
            return found

    def _contents(self, ids) -> list[str] | None:
        """Texts of the recorded candidates, fetched only when content capture is on."""
        if not self.capture.capture_content:
            return None
        head = [str(i) for i in ids[: self.capture.max_candidates]]
        payloads = self._payloads(head)
        return [payloads.get(i, {}).get("text", "") for i in head]

    def _keyword(self, spans: StageSpans, rw: Rewrite, limit: int, flt, use_graph: bool) -> KeywordResult | None:
        if not self.config.fusion.enabled(Stage.KEYWORD):
            with spans.skipped(SpanName.KEYWORD, SKIP_REASON):
                return None
        with spans.stage(SpanName.KEYWORD) as span:
            text = rw.keyword_query if use_graph else rw.query
            try:
                found = keyword(self.index.store, self.index.bm25, self.index.term_stats, text, limit,
                                self.index.doc_ids, flt)
            except Exception as exc:
                return self._degrade(spans, span, Stage.KEYWORD, exc)
            spans.record(span, attrs.candidates, found.candidates.ids, found.candidates.scores, self.capture,
                    self._contents(found.candidates.ids))
            return found

    def _graph(self, spans: StageSpans, rw: Rewrite, depth: int, limit: int) -> GraphResult:
        if depth > 0 and not self.config.fusion.enabled(Stage.GRAPH):
            with spans.skipped(SpanName.GRAPH, SKIP_REASON):
                return GraphResult.empty()
        with spans.stage(SpanName.GRAPH, {v.DEPTH: depth}) as span:
            if depth == 0 or not rw.entities:
                return GraphResult.empty()
            span.set_attribute(v.GRAPH_METHOD, self.config.graph.method.value)
            try:
                g = graph(self.index.graph, [e.key for e in rw.entities], depth, limit, self.config.graph, rw.query)
            except Exception as exc:
                self._degrade(spans, span, Stage.GRAPH, exc)
                return GraphResult.empty()
            spans.record(span, attrs.candidates, g.docs.ids, g.docs.scores, self.capture, self._contents(g.docs.ids))
            span.set_attribute(v.GRAPH_HITS, len(g.hits))
            return g

    @staticmethod
    def _degrade(spans: StageSpans, span: trace.Span, stage: Stage, exc: Exception) -> None:
        log.warning("%s stage failed, skipped: %s", stage.value, exc)
        span.record_exception(exc)
        span.set_status(Status(StatusCode.ERROR, str(exc)))
        spans.degraded.append(stage.value)
        return None

    def _relevance(self, reranked, lists: list[Candidates], evidence: conf.QueryEvidence) -> tuple[np.ndarray, bool]:
        dense_list = next((c for c in lists if c.stage is Stage.DENSE), None)
        model = self.relevance
        if dense_list is None and not isinstance(model, (conf.LogisticRelevance, conf.IsotonicRelevance)):
            model = conf.RankRelevance()
        x = conf.features(reranked, evidence)
        return (model.predict(x) if len(reranked) else np.empty(0)), model.rank_only, x

    def _filter_and_shape(self, spans, req, mode, rw, g, reranked, lists, evidence, root) -> tuple[dict, SearchDetail]:
        with spans.stage(SpanName.FILTER) as span:
            relevance, rank_only, x = self._relevance(reranked, lists, evidence)
            best = shaping.best_relevance(relevance)
            outcome = apply_filters(reranked.ids, relevance, req, self._payloads)
            spans.record(span, attrs.filtered, outcome.applied, outcome.dropped, self.capture)
            span.set_attribute(v.RELEVANCE_MODEL, "rank" if rank_only else self.relevance.name)
        with spans.stage(SpanName.SHAPE):
            rows = outcome.keep[: req.top_k]
            ids = [str(reranked.ids[r]) for r in rows]
            payloads = self._payloads(ids)
            band_of = conf.bands(relevance[rows], self.config.confidence, rank_only)
            results = [shaping.chunk_result(i, payloads.get(i, {"id": i}), relevance[r], b, reranked, int(r), req.debug)
                       for i, r, b in zip(ids, rows, band_of)]
            if mode is Mode.GRAPH and g.relations:
                rel = np.array([h.score for h in g.relations]) / max(h.score for h in g.relations)
                rel_scores = np.minimum(rel * best, best)  # a relation is never more relevant than the best chunk
                rel_bands = conf.bands(rel_scores, self.config.confidence, True)
                results += [shaping.relation_result(h, s, b) for h, s, b in zip(g.relations, rel_scores, rel_bands)]
            no_confident = not results or best < self.config.confidence.low
            weak = not results or best < self.config.confidence.high
            top_title = payloads.get(ids[0], {}).get("title") if ids else None
            hints = (retry_hints(rw.query, [e.name for e in rw.entities], g.hits, top_title) if weak else None)
            detail = SearchDetail(
                stage_ids={c.stage.value: tuple(c.ids) for c in lists},
                fused_ids=tuple(reranked.ids),
                dropped_ids=outcome.dropped,
                ranking=tuple(str(i) for i in reranked.ids[outcome.keep]),
                ranking_scores=tuple(float(s) for s in reranked.scores[outcome.keep]),
                relevance=tuple(float(r) for r in relevance[outcome.keep]),
                features=x[outcome.keep],
            )
            return {
                "results": results,
                "kg": shaping.kg_triples(g.hits, set(ids), g.relations) if mode is Mode.GRAPH else [],
                "rewrite_terms": list(rw.rewrite_terms) if mode is Mode.GRAPH else [],
                "bestScore": best,
                "noConfidentResults": bool(no_confident),
                "retryHints": hints,
                "traceId": trace_id(root),
                "mode": mode.value,
                "degraded": list(spans.degraded),
            }, detail
