"""Graph stage: triples around the query's entities, and the documents behind them.

A triple ``h`` hops from a query entity ``e`` weighs
``decay ** (h - 1) / log2(1 + degree(e))``: near triples count more, and triples
reached from a hub entity count less (the IDF-like damping HippoRAG applies to
node specificity). A document scores the sum of the weights of the triples it
contributed; a relation hit scores its triple's weight.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from dataclasses import dataclass

from retriever.config import GraphConfig
from retriever.graph.base import GraphStore
from retriever.types import Candidates, GraphHit, Stage, Triple


@dataclass(frozen=True)
class RelationHit:
    id: str
    triple: Triple
    score: float


@dataclass(frozen=True)
class GraphResult:
    docs: Candidates
    hits: tuple[GraphHit, ...]
    relations: tuple[RelationHit, ...]

    @classmethod
    def empty(cls) -> "GraphResult":
        return cls(Candidates.empty(Stage.GRAPH), (), ())


def relation_id(t: Triple) -> str:
    digest = hashlib.sha1("\x1f".join(t.key()).encode("utf-8")).hexdigest()[:16]
    return f"rel:{digest}"


def hit_weight(hit: GraphHit, degree: dict[str, int], decay: float) -> float:
    return decay ** (hit.hops - 1) / math.log2(1 + max(1, degree.get(hit.seed, 1)))


def score_hits(hits: list[GraphHit], degree: dict[str, int], config: GraphConfig, limit: int) -> GraphResult:
    """Documents and relations scored from the reached triples."""
    doc_scores: dict[str, float] = defaultdict(float)
    rel_scores: dict[tuple, tuple[Triple, float]] = {}
    for hit in hits:
        w = hit_weight(hit, degree, config.hop_decay)
        doc_scores[hit.triple.doc_id] += w
        key = hit.triple.key()
        if key not in rel_scores or rel_scores[key][1] < w:
            rel_scores[key] = (hit.triple, w)
    ranked = sorted(doc_scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    relations = sorted(rel_scores.values(), key=lambda tw: (-tw[1], tw[0].key()))
    return GraphResult(
        Candidates.from_pairs(Stage.GRAPH, ranked),
        tuple(hits),
        tuple(RelationHit(relation_id(t), t, w) for t, w in relations[: config.max_relation_hits]),
    )


def graph(store: GraphStore, entity_keys: list[str], depth: int, limit: int, config: GraphConfig) -> GraphResult:
    """Triples within ``depth`` hops of the entities, scored into candidates."""
    if depth <= 0 or not entity_keys:
        return GraphResult.empty()
    hits = store.neighbourhood(entity_keys, depth, config.max_hits)
    degree = store.degree(entity_keys)
    return score_hits(hits, degree, config, limit)
