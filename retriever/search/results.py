"""The last two stages of a search: filter the reranked list, then shape the response's records.

Relevance and bands come from ``retriever.search.confidence``, retry hints from
``retriever.search.retry_hints``; the records are ``retriever.response``'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from searchtrace.names import Band, Mode, Stage
from searchtrace.retriever.config.model import ConfidenceConfig
from searchtrace.retriever.request import SearchRequest
from searchtrace.retriever.response import Hit, Metadata, RelationHit, Result, ScoreDetail, SearchResponse
from searchtrace.retriever.search import confidence as conf
from searchtrace.retriever.search.answer import SearchDetail
from searchtrace.retriever.search.retry_hints import retry_hints
from searchtrace.retriever.search.traced import StageSpans
from searchtrace.retriever.stages import filter as filtering
from searchtrace.retriever.stages.filter import FilterOutcome, apply_filters
from searchtrace.retriever.stages.graph import GraphResult, RelationMatch
from searchtrace.retriever.stages.rewrite import Rewrite
from searchtrace.retriever.types import Candidates, Fused, GraphHit, ShownOrder, Triple
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
    relations: tuple[RelationMatch, ...] = ()  # the relation hits whose document passes the filters


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
                 lists: list[Candidates], evidence: conf.QueryEvidence, relations: tuple[RelationMatch, ...],
                 payloads: Payloads, capture: attrs.CaptureConfig, order: ShownOrder = ShownOrder.FUSED) -> Filtered:
    """Score relevance, drop what the request's filters exclude (documents, and the facts they hold), and put
    the rest in the order shown, each with the relevance it shows (never more than the one above)."""
    with spans.stage(Stage.FILTER) as span:
        relevance, used, x = relevance_of(model, reranked, lists, evidence)
        outcome = apply_filters(reranked.ids, relevance, req, payloads, order)
        allowed = _allowed_relations(relations, req, payloads)
        spans.record(span, attrs.filtered, outcome.applied, outcome.dropped, capture)
        span.set_attribute(v.RELEVANCE_MODEL, "rank" if used.rank_only else model.name)
    return Filtered(relevance, used.rank_only, x, outcome, allowed)


def shape_stage(spans: StageSpans, req: SearchRequest, mode: Mode, rw: Rewrite, g: GraphResult,
                reranked: Fused, lists: list[Candidates], kept: Filtered, payloads: Payloads,
                confidence: ConfidenceConfig, trace_id: str) -> SearchResponse:
    """The response: top_k results (passages and facts in one order) with bands, the triples behind them,
    hints (``detail`` builds what an eval needs)."""
    with spans.stage(Stage.SHAPE):
        best = round(kept.outcome.best, 3)  # as a result would show it
        rows = kept.outcome.keep[: req.top_k]
        shown = np.round(kept.outcome.shown[: req.top_k], 3)  # as the response writes it: the band follows it
        ids = [str(reranked.ids[r]) for r in rows]
        graph_mode = mode is Mode.GRAPH
        relations = kept.relations if graph_mode and ids else ()
        found = payloads(list(dict.fromkeys(ids + [h.triple.doc_id for h in relations])))
        band_of = conf.bands(shown, confidence, kept.rank_only)
        results: list[Hit] = [
            chunk_result(i, found.get(i, {"id": i}), s, b, reranked, int(r), req.debug)
            for i, r, s, b in zip(ids, rows, shown, band_of)]
        if relations:
            # capped at the best chunk returned; facts then compete with the passages for the top_k places
            facts = _relations(relations, results[0].score, confidence, kept.rank_only, found)
            results = merged(results, facts)[: req.top_k]
        weak = not results or best < confidence.high
        shown_ids = {r.id for r in results if isinstance(r, Result)}
        top_title = found.get(ids[0], {}).get("title") if ids else None
        return SearchResponse(
            results=tuple(results),
            kg=kg_triples(g.hits, shown_ids, [r for r in results if isinstance(r, RelationHit)]) if graph_mode else (),
            rewrite_terms=tuple(rw.rewrite_terms) if graph_mode else (),
            best_score=best,
            no_confident_results=bool(not results or best < confidence.low),
            retry_hints=retry_hints(rw.query, [e.name for e in rw.entities], g.hits, top_title,
                                    bool(results) and results[0].score >= confidence.low) if weak else None,
            trace_id=trace_id,
            mode=mode,
            degraded=tuple(spans.degraded),
        )


def _allowed_relations(relations: tuple[RelationMatch, ...], req: SearchRequest,
                       payloads: Payloads) -> tuple[RelationMatch, ...]:
    """The relation hits with a source document that passes the request's document constraints, each naming
    only such documents."""
    if not relations or not (req.doc_ids or any(getattr(req, n) for n in filtering.PAYLOAD_FIELDS)):
        return relations
    allowed = filtering.passing_documents([d for h in relations for d in h.sources], req, payloads)
    return tuple(m for m in (h.within(allowed) for h in relations) if m is not None)


def _relations(relations: tuple[RelationMatch, ...], cap: float, confidence: ConfidenceConfig,
               rank_only: bool, found: Mapping[str, Mapping[str, Any]]) -> list[RelationHit]:
    """Relation hits, best first, the best scored ``cap`` (the best returned chunk's score, as shown), banded
    as a chunk of the same score is, each with its first document's metadata."""
    top = max(h.score for h in relations)
    rel = np.array([h.score for h in relations]) / top if top > 0 else np.zeros(len(relations))
    rel_scores = np.minimum(np.floor(rel * cap * 1000 + 1e-6) / 1000, cap)  # never above the best chunk, rounded
    order = np.argsort(-rel_scores, kind="stable")
    rel_bands = conf.bands(rel_scores[order], confidence, rank_only)
    return [relation_result(relations[i], rel_scores[i], b, found.get(relations[i].triple.doc_id, {}))
            for i, b in zip(order, rel_bands)]


def merged(chunks: list[Hit], relations: list[RelationHit]) -> list[Hit]:
    """Chunks and relation hits in one list by score, best first (a chunk before a fact of equal score), so the
    relevance shown never increases down the response."""
    out: list[Hit] = []
    facts = iter(relations)
    fact = next(facts, None)
    for chunk in chunks:
        while fact is not None and fact.score > chunk.score:
            out.append(fact)
            fact = next(facts, None)
        out.append(chunk)
    while fact is not None:
        out.append(fact)
        fact = next(facts, None)
    return out


def _num(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else round(float(x), 6)


def score_detail(fused: Fused, row: int) -> ScoreDetail:
    """The raw score and rank of the fused list's ``row`` in each list (a debug request)."""

    def component(stage: Stage) -> float | None:
        return _num(fused.components[stage][row]) if stage in fused.components else None

    def rank(stage: Stage) -> int | None:
        return (int(fused.ranks[stage][row]) or None) if stage in fused.ranks else None

    return ScoreDetail(component(Stage.DENSE), component(Stage.KEYWORD), component(Stage.GRAPH),
                       _num(fused.scores[row]), rank(Stage.DENSE), rank(Stage.KEYWORD), rank(Stage.GRAPH), row + 1)


def chunk_result(doc_id: str, payload: Mapping[str, Any], relevance: float, band: Band,
                 fused: Fused | None, row: int, debug: bool) -> Result:
    title, text = payload.get("title", ""), payload.get("text", "")
    return Result(doc_id, f"{title}\n{text}" if title else text, round(float(relevance), 3), band,
                  Metadata.of(payload), score_detail(fused, row) if debug and fused is not None else None)


def relation_result(hit: RelationMatch, relevance: float, band: Band,
                    payload: Mapping[str, Any] | None = None) -> RelationHit:
    """A fact shown: ``payload`` is its first document's (``hit.triple.doc_id``)."""
    t = hit.triple
    return RelationHit(hit.id, t.subject, t.relation, t.object, round(float(relevance), 3), band,
                       Metadata.of(payload or {}), hit.sources)


def kg_triples(hits: Sequence[GraphHit], result_ids: set[str], relations: Sequence[RelationHit]) -> tuple[Triple, ...]:
    """Deduplicated triples behind the results shown: those the graph stage reached in a passage shown, then the
    facts shown (each as its first document's triple)."""
    seen: set[tuple[str, str, str]] = set()
    out: list[Triple] = []
    picked = [h.triple for h in hits if h.triple.doc_id in result_ids] + [
        Triple(r.subject, r.relation, r.object, r.doc_ids[0] if r.doc_ids else "") for r in relations]
    for t in picked:
        key = (t.subject, t.relation, t.object)
        if key not in seen:
            seen.add(key)
            out.append(t)
    return tuple(out)


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
        relevance=tuple(float(r) for r in kept.outcome.shown),
        bands=tuple(conf.bands(np.round(kept.outcome.shown, 3), confidence, kept.rank_only)),
        features=kept.features[keep],
    )
