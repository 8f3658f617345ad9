"""The search pipeline: composes the stages, one OpenTelemetry span each.

validate -> rewrite -> embed -> dense -> keyword -> graph -> [feedback] -> fuse ->
rerank -> filter -> shape. A stage whose fusion weight is 0 is skipped (its span
says so); feedback runs only when configured. The pipeline holds no logic of its
own: each retrieval stage runs in ``retriever.traced_stages`` (logic in
``retriever.stages``), filter and shape in ``retriever.results``.
"""

from __future__ import annotations

import logging
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
from retriever.results import SearchDetail, filter_stage, query_evidence, shape_stage
from retriever.results import detail as build_detail
from retriever.stages import shape as shaping
from retriever.stages.filter import payload_filter
from retriever.stages.rerank import IdentityReranker, Reranker
from retriever.stages.validate import validate_request
from retriever.traced_stages import TracedStages, payloads
from retriever.types import Mode
from traces import attributes as attrs
from traces import vocabulary as v
from traces.vocabulary import SpanName

log = logging.getLogger(__name__)

__all__ = ["Retriever", "SearchDetail"]


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
        return self._traced(request, query_vector, run_id, query_id, with_detail=False)[0]

    def search_detailed(self, request: Mapping[str, Any] | SearchRequest, *, query_vector: np.ndarray | None = None,
                        run_id: str | None = None, query_id: str | None = None) -> tuple[dict, SearchDetail | None]:
        """:meth:`search`, plus what an evaluation needs: every stage's candidates and the full ranking.

        The detail is ``None`` when the search returned an error.
        """
        return self._traced(request, query_vector, run_id, query_id, with_detail=True)

    def _traced(self, request, query_vector, run_id, query_id, with_detail: bool) -> tuple[dict, SearchDetail | None]:
        """One search under its root span; the detail only when asked for (a plain search skips building it)."""
        with self.tracer.start_as_current_span(SpanName.SEARCH.value, attributes=attrs.span_kind(SpanName.SEARCH),
                                               record_exception=False, set_status_on_exception=False) as root:
            record(root, attrs.eval_context, run_id, query_id)
            try:
                response, detail = self._search(request, root, query_vector, with_detail)
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
        found = payloads(self.index, ids)
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFoundError(f"unknown document ids: {', '.join(missing[:20])}", field="ids")
        return [{"id": i, "title": found[i].get("title", ""), "text": found[i].get("text", ""),
                 "metadata": shaping.metadata(found[i])} for i in ids]

    def get_chunks(self, ids: list[str]) -> list[dict]:
        """Chunks by id (one chunk per document in this index), shaped like results."""
        docs = self.get_docs(ids)
        return [{"id": d["id"], "content": f"{d['title']}\n{d['text']}" if d["title"] else d["text"],
                 "component_type": "chunk", "metadata": d["metadata"]} for d in docs]

    # -- composition -------------------------------------------------------

    def _search(self, request, root: trace.Span, query_vector, with_detail: bool) -> tuple[dict, SearchDetail | None]:
        spans = StageSpans(self.tracer, trace.set_span_in_context(root), self.deferred)
        with spans.stage(SpanName.VALIDATE):
            req = validate_request(request)
        mode = req.mode or self.default_mode()
        use_graph = mode is Mode.GRAPH and self.index.graph is not None
        depth = 0 if mode is Mode.FAST else (req.depth if req.depth is not None else self.config.graph.depth)
        spans.record(root, attrs.request, req.query, mode.value, req.top_k, req.candidates, depth, self.capture)
        run = TracedStages(spans, self.index, self.embedder, self.config, self.capture, self._parts_weight)

        rw = run.rewrite(req, use_graph)
        vector = run.embed(rw, query_vector)
        flt = payload_filter(req)
        flt = None if flt.is_empty() else flt
        dense_found = run.dense(vector, req.candidates, flt)
        keyword_found = run.keyword(rw, req.candidates, flt, use_graph)
        first = [dense_found, keyword_found and keyword_found.candidates]  # the graph's seed passages come from these
        g = run.graph(rw, depth if use_graph else 0, req.candidates, first)
        if dense_found is None and keyword_found is None:
            raise BackendUnavailable("no dense or keyword search ran: " + ", ".join(spans.degraded) + " failed")
        lists = [c for c in (dense_found, keyword_found and keyword_found.candidates, g.docs) if c is not None and len(c)]
        if self.config.feedback.enabled and dense_found is not None and len(dense_found):
            dense_found, lists = run.feedback(vector, dense_found, lists, req.candidates, flt)
        evidence = query_evidence(dense_found, keyword_found)
        reranked = run.rerank(self.reranker, rw.query, run.fuse(lists, vector), req.top_k)
        found = self._payloads
        kept = filter_stage(spans, self.relevance, req, reranked, lists, evidence, found, self.capture)
        response = shape_stage(spans, req, mode, rw, g, reranked, lists, kept, found, self.config.confidence,
                               trace_id(root))
        return response, (build_detail(lists, reranked, kept) if with_detail else None)

    def _payloads(self, ids: list[str]) -> dict[str, Mapping[str, Any]]:
        return payloads(self.index, ids)
