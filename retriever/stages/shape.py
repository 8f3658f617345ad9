"""Shape stage: the response's records from the kept candidates."""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from searchtrace.names import Band, Stage
from searchtrace.retriever.response import Metadata, RelationHit, Result, ScoreDetail
from searchtrace.retriever.stages.graph import RelationMatch
from searchtrace.retriever.types import Fused, GraphHit, Triple


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


def relation_result(hit: RelationMatch, relevance: float, band: Band) -> RelationHit:
    t = hit.triple
    return RelationHit(hit.id, t.subject, t.relation, t.object, round(float(relevance), 3), band)


def kg_triples(hits: Sequence[GraphHit], result_ids: set[str], relations: Sequence[RelationMatch]) -> tuple[Triple, ...]:
    """Deduplicated triples behind the results: from result documents, and relation hits."""
    seen: set[tuple[str, str, str]] = set()
    out: list[Triple] = []
    picked = [h.triple for h in hits if h.triple.doc_id in result_ids] + [r.triple for r in relations]
    for t in picked:
        key = (t.subject, t.relation, t.object)
        if key not in seen:
            seen.add(key)
            out.append(t)
    return tuple(out)


def best_relevance(relevance: np.ndarray) -> float:
    return round(float(np.max(relevance)), 3) if len(relevance) else 0.0
