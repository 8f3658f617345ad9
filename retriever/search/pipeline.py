"""The search pipeline: composes the stages, one OpenTelemetry span each.

validate -> rewrite -> embed -> dense -> keyword -> graph -> [feedback] -> fuse ->
rerank -> filter -> shape. A stage whose fusion weight is 0 is skipped (its span
says so); feedback runs only when configured. The pipeline holds no logic of its
own: each retrieval stage runs in ``retriever.search.traced`` (logic in
``retriever.stages``), filter and shape in ``retriever.search.results``.
"""

from __future__ import annotations

import functools
import logging
from typing import Any, Mapping, Sequence

import numpy as np
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from searchtrace.errors import BackendUnavailable, NotFoundError, SearchFailed, SearchtraceError
from searchtrace.names import Mode, Stage
from searchtrace.retriever.config.model import RetrieverConfig
from searchtrace.retriever.embedding.cache import Encoder
from searchtrace.retriever.index import OpenIndex
from searchtrace.retriever.request import SearchRequest, valid_query
from searchtrace.retriever.response import Metadata, SearchResponse
from searchtrace.retriever.search import cold
from searchtrace.retriever.search import confidence as conf
from searchtrace.retriever.search.answer import Answer, SearchDetail
from searchtrace.retriever.search.results import detail as build_detail
from searchtrace.retriever.search.results import filter_stage, shape_stage
from searchtrace.retriever.search.traced import (
    StageSpans,
    TracedStages,
    payloads,
    query_evidence,
    record,
    record_outcome,
    trace_id,
)
from searchtrace.retriever.stages.filter import payload_filter
from searchtrace.retriever.stages.rerank import IdentityReranker, Reranker
from searchtrace.retriever.types import FusionMethod
from searchtrace.traces import DeferredAttributes
from searchtrace.traces import attributes as attrs
from searchtrace.traces import vocabulary as v

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
        source: who calls (``searchtrace.source`` on every search span); a search may say otherwise.
    """

    def __init__(self, index: OpenIndex, embedder: Encoder, config: RetrieverConfig | None = None, *,
                 tracer: trace.Tracer | None = None, relevance: conf.RelevanceModel | None = None,
                 reranker: Reranker | None = None, capture: attrs.CaptureConfig | None = None,
                 deferred: DeferredAttributes | None = None, source: v.Source = v.Source.PYTHON) -> None:
        self.index = index
        self.embedder = embedder
        self.config = config or RetrieverConfig()
        self.tracer = tracer or trace.get_tracer("searchtrace")
        if relevance is None and self.config.confidence.calibration_path:
            relevance = conf.load_calibration(self.config.confidence.calibration_path)
        self.relevance: conf.RelevanceModel = relevance or conf.SimilarityRelevance()
        self.reranker = reranker or IdentityReranker()
        self.capture = capture or attrs.CaptureConfig()
        self.deferred = deferred
        self.source = source
        # an index built without passage parts searches by the passage vector alone
        self._parts_weight = self.config.dense.parts_weight if index.manifest.parts else 0.0

    # -- public API --------------------------------------------------------

    def default_mode(self) -> Mode:
        """``graph`` when the index has a knowledge graph, else ``fast``."""
        return Mode.GRAPH if self.index.graph is not None else Mode.FAST

    @property
    def index_key(self) -> str:
        """The content-addressed key of the open index (dataset bytes + index configuration)."""
        return self.index.manifest.key

    def close(self) -> None:
        """Close the index's stores (the vector shard, the graph connection)."""
        self.index.close()

    def search(self, request: Mapping[str, Any] | SearchRequest, *, query_vector: np.ndarray | None = None,
               run_id: str | None = None, query_id: str | None = None,
               source: v.Source | None = None) -> SearchResponse:
        """Run one search. Raises a :class:`SearchtraceError` (a bad request, a backend down, a failure).

        ``source`` overrides the retriever's for this search's span (a server says http or mcp).
        """
        return self._traced(request, query_vector, run_id, query_id, with_detail=False, source=source)[0]

    def search_detailed(self, request: Mapping[str, Any] | SearchRequest, *, query_vector: np.ndarray | None = None,
                        run_id: str | None = None, query_id: str | None = None
                        ) -> tuple[SearchResponse, SearchDetail]:
        """:meth:`search`, plus what an evaluation needs: every stage's candidates and the full ranking."""
        response, detail = self._traced(request, query_vector, run_id, query_id, with_detail=True)
        assert detail is not None  # built when asked for
        return response, detail

    def search_many(self, requests: Sequence[Mapping[str, Any] | SearchRequest], *, run_id: str | None = None,
                    query_ids: Sequence[str] | None = None) -> list[Answer]:
        """:meth:`search` of each request, their query vectors embedded in one batch.

        Query vectors come from the embedding cache of the retriever's home (the
        model embeds queries and passages alike), so repeating a set of queries
        embeds nothing. Each search is its own trace, tagged with ``run_id`` and
        its query id when given. One request's error is its answer's ``error``;
        the others still run.
        """
        return self._many(requests, run_id, query_ids, with_detail=False)

    def search_many_detailed(self, requests: Sequence[Mapping[str, Any] | SearchRequest], *,
                             run_id: str | None = None, query_ids: Sequence[str] | None = None
                             ) -> list[Answer]:
        """:meth:`search_many`, each response with its :class:`SearchDetail`."""
        return self._many(requests, run_id, query_ids, with_detail=True)

    def _many(self, requests: Sequence[Mapping[str, Any] | SearchRequest], run_id: str | None,
              query_ids: Sequence[str] | None, with_detail: bool) -> list[Answer]:
        if query_ids is not None and len(query_ids) != len(requests):
            raise ValueError(f"{len(query_ids)} query ids for {len(requests)} requests")
        vectors = self._query_vectors(requests)
        ids: Sequence[str | None] = query_ids if query_ids is not None else [None] * len(requests)
        return [Answer.timed(functools.partial(self._traced, request, vector, run_id, query_id, with_detail))
                for request, vector, query_id in zip(requests, vectors, ids)]

    def _query_vectors(self, requests: Sequence[Mapping[str, Any] | SearchRequest]) -> list[np.ndarray | None]:
        """Each request's query vector, embedded through the cache in one batch.

        None where the embed stage will not run (dense skipped) or the query is not
        text (validation then rejects the request). The query text is embedded as
        given, which is how evaluation runs have always embedded their queries.
        """
        texts = [r.query if isinstance(r, SearchRequest) else r.get("query") if isinstance(r, Mapping) else None
                 for r in requests]
        if not self._embeds_queries():
            return [None] * len(requests)
        wanted = [i for i, t in enumerate(texts) if isinstance(t, str) and t.strip()]
        out: list[np.ndarray | None] = [None] * len(requests)
        if wanted:
            from searchtrace.retriever.embedding.cache import EmbeddingCache, embed_with_cache

            with EmbeddingCache(self.config.home.embedding_cache) as cache:
                vectors = embed_with_cache(self.embedder, cache, [str(texts[i]) for i in wanted]).vectors
            for i, vec in zip(wanted, vectors):
                out[i] = vec
        return out

    def _embeds_queries(self) -> bool:
        fusion = self.config.fusion
        return fusion.enabled(Stage.DENSE) or fusion.method is FusionMethod.KEYWORD_THEN_DENSE

    def _traced(self, request: Mapping[str, Any] | SearchRequest, query_vector: np.ndarray | None,
                run_id: str | None, query_id: str | None, with_detail: bool,
                source: v.Source | None = None) -> tuple[SearchResponse, SearchDetail | None]:
        """One search under its root span; the detail only when asked for (a plain search skips building it)."""
        manifest = self.index.manifest
        opening = {**attrs.span_kind(v.SEARCH_SPAN),
                   **attrs.origin((source or self.source).value, manifest.dataset, manifest.key, cold.PROCESS.take())}
        with self.tracer.start_as_current_span(v.SEARCH_SPAN, attributes=opening,
                                               record_exception=False, set_status_on_exception=False) as root:
            record(root, attrs.eval_context, run_id, query_id)
            try:
                response, detail = self._search(request, root, query_vector, with_detail)
            except SearchtraceError as exc:
                root.set_status(Status(StatusCode.ERROR, exc.message))
                root.set_attribute(v.ERROR_CODE, exc.code.value)
                if v.INPUT_VALUE not in (getattr(root, "attributes", None) or {}):  # refused before it was recorded
                    record(root, attrs.refused_query, valid_query(request), self.capture)
                raise
            except Exception as exc:  # a bug or an unexpected backend failure: one error of ours, logged
                log.exception("search failed")
                root.record_exception(exc)
                # the exception's text stays in the log and the trace: an answer never carries it
                where = f"; trace {trace_id(root)} records it" if trace_id(root) else ""
                failed = SearchFailed(f"search failed: an internal {type(exc).__name__}{where}")
                root.set_status(Status(StatusCode.ERROR, str(exc)))
                root.set_attribute(v.ERROR_CODE, failed.code.value)
                raise failed from exc
            record_outcome(root, response, self.deferred)
            return response, detail

    def get_docs(self, ids: list[str]) -> list[dict]:
        """Documents by id, in the order asked. Raises NotFoundError naming unknown ids."""
        found = payloads(self.index, ids)
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFoundError(f"unknown document ids: {', '.join(missing[:20])}", field="ids")
        return [{"id": i, "title": found[i].get("title", ""), "text": found[i].get("text", ""),
                 "metadata": Metadata.of(found[i]).to_json()} for i in ids]

    def get_chunks(self, ids: list[str]) -> list[dict]:
        """Chunks by id (one chunk per document in this index), shaped like results."""
        docs = self.get_docs(ids)
        return [{"id": d["id"], "content": f"{d['title']}\n{d['text']}" if d["title"] else d["text"],
                 "component_type": "chunk", "metadata": d["metadata"]} for d in docs]

    # -- composition -------------------------------------------------------

    def _search(self, request: Mapping[str, Any] | SearchRequest, root: trace.Span, query_vector: np.ndarray | None,
                with_detail: bool) -> tuple[SearchResponse, SearchDetail | None]:
        spans = StageSpans(self.tracer, trace.set_span_in_context(root), self.deferred)
        run = TracedStages(spans, self.index, self.embedder, self.config, self.capture, self._parts_weight)
        req = run.validate(request)
        requested = payload_filter(req)
        mode = req.mode or self.default_mode()
        use_graph = mode is Mode.GRAPH and self.index.graph is not None
        depth = 0 if mode is Mode.FAST else (req.depth if req.depth is not None else self.config.graph.depth)
        spans.record(root, attrs.request, req.query, mode.value, req.top_k, req.candidates, depth, self.capture)

        rw = run.rewrite(req, use_graph)
        vector = run.embed(rw, query_vector)
        flt = None if requested.is_empty() else requested
        dense_found = run.dense(vector, req.candidates, flt)
        keyword_found = run.keyword(rw, req.candidates, flt, use_graph)
        keyword_list = keyword_found.candidates if keyword_found is not None else None
        g = run.graph(rw, depth if use_graph else 0, req.candidates, [dense_found, keyword_list])  # seed passages
        if dense_found is None and keyword_found is None:
            raise BackendUnavailable("no dense or keyword search ran: " + ", ".join(spans.degraded) + " failed")
        lists = [c for c in (dense_found, keyword_list, g.docs) if c is not None and len(c)]
        if self.config.feedback.enabled and vector is not None and dense_found is not None and len(dense_found):
            dense_found, lists = run.feedback(vector, dense_found, lists, req.candidates, flt)
        evidence = query_evidence(dense_found, keyword_found)
        reranked = run.rerank(self.reranker, rw.query, run.fuse(lists, vector), req.top_k)
        found = self._payloads
        kept = filter_stage(spans, self.relevance, req, reranked, lists, evidence, g.relations, found, self.capture,
                            self.config.confidence.order)
        response = shape_stage(spans, req, mode, rw, g, reranked, lists, kept, found, self.config.confidence,
                               trace_id(root))
        return response, (build_detail(lists, reranked, kept, self.config.confidence) if with_detail else None)

    def _payloads(self, ids: list[str]) -> dict[str, Mapping[str, Any]]:
        return payloads(self.index, ids)
