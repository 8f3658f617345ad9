"""The last two stages of a search: filter the reranked list, then shape the response.

Relevance and bands come from ``retriever.search.confidence``, retry hints from
``retriever.search.retry_hints``, the result dicts from ``retriever.stages.shape``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from searchtrace.names import Mode, Stage
from searchtrace.retriever.config.model import ConfidenceConfig
from searchtrace.retriever.request import SearchRequest
from searchtrace.retriever.response import Hit, RelationHit, SearchResponse
from searchtrace.retriever.search import confidence as conf
from searchtrace.retriever.search.answer import SearchDetail
from searchtrace.retriever.search.retry_hints import retry_hints
from searchtrace.retriever.search.spans import StageSpans
from searchtrace.retriever.stages import filter as filtering
from searchtrace.retriever.stages import shape as shaping
from searchtrace.retriever.stages.filter import FilterOutcome, apply_filters
from searchtrace.retriever.stages.graph import GraphResult, RelationMatch
from searchtrace.retriever.stages.keyword import KeywordResult
from searchtrace.retriever.stages.rewrite import Rewrite
from searchtrace.retriever.types import Candidates, Fused
from searchtrace.traces import attributes as attrs
from searchtrace.traces import vocabulary as v

Payloads = Callable[[list[str]], dict[str, Mapping[str, Any]]]


@dataclass(frozen=True)
class Filtered:
    """The filter stage's output: relevance of every reranked candidate and which are kept."""

    relevance: np.ndarray
    rank_only: bool
    features: np.ndarray
    outcome: FilterOutcome


def query_evidence(dense_found: Candidates | None, keyword_found: KeywordResult | None) -> conf.QueryEvidence:
    """What the relevance model reads about the query as a whole, from the dense and keyword stages."""
    return conf.QueryEvidence(
        dense_floor=float(dense_found.scores[-1]) if dense_found is not None and len(dense_found) else 0.0,
        keyword_max=keyword_found.max_score if keyword_found else 0.0,
        unknown_share=keyword_found.unknown_share if keyword_found else 0.0,
    )


def relevance_of(model: conf.RelevanceModel, reranked: Fused, lists: list[Candidates],
                 evidence: conf.QueryEvidence) -> tuple[np.ndarray, conf.RelevanceModel, np.ndarray]:
    """Relevance (0-1) of each reranked candidate, the model that gave it, and its features.

    Without a dense list, similarity cannot be read, so ranks decide (unless the model is calibrated).
    """
    if next((c for c in lists if c.stage is Stage.DENSE), None) is None and not isinstance(
            model, (conf.LogisticRelevance, conf.IsotonicRelevance)):
        model = conf.RankRelevance()
    x = conf.features(reranked, evidence)
    return (model.predict(x) if len(reranked) else np.empty(0)), model, x


def filter_stage(spans: StageSpans, model: conf.RelevanceModel, req: SearchRequest, reranked: Fused,
                 lists: list[Candidates], evidence: conf.QueryEvidence, payloads: Payloads,
                 capture: attrs.CaptureConfig) -> Filtered:
    """Score relevance, then drop what the request's filters exclude."""
    with spans.stage(Stage.FILTER) as span:
        relevance, used, x = relevance_of(model, reranked, lists, evidence)
        outcome = apply_filters(reranked.ids, relevance, req, payloads)
        spans.record(span, attrs.filtered, outcome.applied, outcome.dropped, capture)
        span.set_attribute(v.RELEVANCE_MODEL, "rank" if used.rank_only else model.name)
    return Filtered(relevance, used.rank_only, x, outcome)


def shape_stage(spans: StageSpans, req: SearchRequest, mode: Mode, rw: Rewrite, g: GraphResult,
                reranked: Fused, lists: list[Candidates], kept: Filtered, payloads: Payloads,
                confidence: ConfidenceConfig, trace_id: str) -> SearchResponse:
    """The response: top_k results with bands, relations, hints (``detail`` builds what an eval needs)."""
    with spans.stage(Stage.SHAPE):
        best = shaping.best_relevance(kept.relevance)
        rows = kept.outcome.keep[: req.top_k]
        ids = [str(reranked.ids[r]) for r in rows]
        found = payloads(ids)
        band_of = conf.bands(kept.relevance[rows], confidence, kept.rank_only)
        results: list[Hit] = [
            shaping.chunk_result(i, found.get(i, {"id": i}), kept.relevance[r], b, reranked, int(r), req.debug)
            for i, r, b in zip(ids, rows, band_of)]
        relations = _allowed_relations(g.relations, req, payloads)
        graph_mode = mode is Mode.GRAPH
        if graph_mode and relations and results:
            # capped at the best chunk returned (bestScore may come from one outside top_k or filtered out)
            results += _relations(relations, max(r.score for r in results), confidence)
        weak = not results or best < confidence.high
        top_title = found.get(ids[0], {}).get("title") if ids else None
        return SearchResponse(
            results=tuple(results),
            kg=shaping.kg_triples(g.hits, set(ids), relations) if graph_mode else (),
            rewrite_terms=tuple(rw.rewrite_terms) if graph_mode else (),
            best_score=best,
            no_confident_results=bool(not results or best < confidence.low),
            retry_hints=retry_hints(rw.query, [e.name for e in rw.entities], g.hits, top_title) if weak else None,
            trace_id=trace_id,
            mode=mode,
            degraded=tuple(spans.degraded),
        )


def _allowed_relations(relations: tuple[RelationMatch, ...], req: SearchRequest,
                       payloads: Payloads) -> tuple[RelationMatch, ...]:
    """The relation hits whose source document passes the request's document constraints."""
    if not relations or not (req.doc_ids or any(getattr(req, n) for n in filtering.PAYLOAD_FIELDS)):
        return relations
    allowed = filtering.passing_documents([h.triple.doc_id for h in relations], req, payloads)
    return tuple(h for h in relations if h.triple.doc_id in allowed)


def _relations(relations: tuple[RelationMatch, ...], cap: float, confidence: ConfidenceConfig) -> list[RelationHit]:
    """Relation hits, the best scored ``cap`` (the best returned chunk's score, as shown)."""
    top = max(h.score for h in relations)
    rel = np.array([h.score for h in relations]) / top if top > 0 else np.zeros(len(relations))
    rel_scores = np.minimum(np.floor(rel * cap * 1000 + 1e-6) / 1000, cap)  # never above the best chunk, rounded
    rel_bands = conf.bands(rel_scores, confidence, True)
    return [shaping.relation_result(h, s, b) for h, s, b in zip(relations, rel_scores, rel_bands)]


def detail(lists: list[Candidates], reranked: Fused, kept: Filtered,
           confidence: ConfidenceConfig) -> SearchDetail:
    """What an evaluation needs of one search (see :class:`SearchDetail`)."""
    keep = kept.outcome.keep
    return SearchDetail(
        stage_ids={c.stage.value: tuple(c.ids) for c in lists},
        fused_ids=tuple(reranked.ids),
        dropped_ids=kept.outcome.dropped,
        ranking=tuple(str(i) for i in reranked.ids[keep]),
        ranking_scores=tuple(float(s) for s in reranked.scores[keep]),
        relevance=tuple(float(r) for r in kept.relevance[keep]),
        bands=tuple(conf.bands(kept.relevance[keep], confidence, kept.rank_only)),
        features=kept.features[keep],
    )
