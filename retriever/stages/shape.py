"""Shape stage: build the JSON response from the kept candidates."""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from searchtrace.names import FUSED_STAGES, Band, Stage
from searchtrace.retriever.response import KgTriple, Metadata, Result
from searchtrace.retriever.stages.graph import RelationHit
from searchtrace.retriever.types import ComponentType, Fused, GraphHit


def metadata(payload: Mapping[str, Any]) -> Metadata:
    return {
        "title": payload.get("title", ""),
        "url": payload.get("url", ""),
        "language": payload.get("language", ""),
        "timestamp": payload.get("timestamp", ""),
        "tags": list(payload.get("tags") or []),
        "collection": payload.get("collection", ""),
    }


def _num(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else round(float(x), 6)


def chunk_result(doc_id: str, payload: Mapping[str, Any], relevance: float, band: Band,
                 fused: Fused | None, row: int, debug: bool) -> Result:
    title, text = payload.get("title", ""), payload.get("text", "")
    result: Result = {
        "id": doc_id,
        "content": f"{title}\n{text}" if title else text,
        "score": round(float(relevance), 3),
        "confidenceBand": band.value,
        "component_type": ComponentType.CHUNK.value,
        "metadata": metadata(payload),
    }
    if debug and fused is not None:
        comps = {s: _num(fused.components[s][row]) if s in fused.components else None for s in FUSED_STAGES}
        result["score_components"] = {"dense": comps[Stage.DENSE], "keyword": comps[Stage.KEYWORD],
                                      "graph": comps[Stage.GRAPH], "fused": _num(fused.scores[row])}
        result["ranks"] = {s.value: (int(fused.ranks[s][row]) or None) if s in fused.ranks else None
                           for s in FUSED_STAGES}
        result["ranks"]["fused"] = row + 1
    return result


def relation_result(hit: RelationHit, relevance: float, band: Band) -> Result:
    t = hit.triple
    return {
        "id": hit.id,
        "content": f"{t.subject} {t.relation} {t.object}",
        "score": round(float(relevance), 3),
        "confidenceBand": band.value,
        "component_type": ComponentType.RELATION.value,
        "metadata": {"title": "", "url": "", "language": "", "timestamp": "", "tags": [], "collection": ""},
        "subject": t.subject,
        "relation": t.relation,
        "object": t.object,
    }


def kg_triples(hits: Sequence[GraphHit], result_ids: set[str], relations: Sequence[RelationHit]) -> list[KgTriple]:
    """Deduplicated triples behind the results: from result documents, and relation hits."""
    seen: set[tuple[str, str, str]] = set()
    out: list[KgTriple] = []
    picked = [h.triple for h in hits if h.triple.doc_id in result_ids] + [r.triple for r in relations]
    for t in picked:
        key = (t.subject, t.relation, t.object)
        if key not in seen:
            seen.add(key)
            out.append({"subject": t.subject, "relation": t.relation, "object": t.object, "doc_id": t.doc_id})
    return out


def best_relevance(relevance: np.ndarray) -> float:
    return round(float(np.max(relevance)), 3) if len(relevance) else 0.0
