"""Graph stage: triples around the query's entities, and the documents behind them.

Two ways to score them (``GraphConfig.method``):

* ``ppr`` (default): personalized PageRank over the reached triples, seeded by
  the query's entities (HippoRAG; see ``retriever.stages.ppr``).
* ``expand``: a triple ``h`` hops from a query entity ``e`` weighs
  ``decay ** (h - 1) / log2(1 + degree(e))``: near triples count more, and
  triples reached from a hub entity count less. A document scores the sum of
  the weights of the triples it contributed.

A relation hit scores its triple's weight (its endpoints' mass under ``ppr``).
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from dataclasses import dataclass

from retriever.config import GraphConfig
from retriever.graph.base import GraphStore
from retriever.stages import ppr
from retriever.types import Candidates, GraphHit, GraphMethod, Stage, Triple


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


def _result(hits: list[GraphHit], doc_scores: dict[str, float], triple_weights, config: GraphConfig,
            limit: int) -> GraphResult:
    """Candidates (best first, ties by id) and the best-weighted distinct triples."""
    rel_scores: dict[tuple, tuple[Triple, float]] = {}
    for hit, w in zip(hits, triple_weights):
        key = hit.triple.key()
        if key not in rel_scores or rel_scores[key][1] < w:
            rel_scores[key] = (hit.triple, float(w))
    ranked = sorted(doc_scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    relations = sorted(rel_scores.values(), key=lambda tw: (-tw[1], tw[0].key()))
    return GraphResult(
        Candidates.from_pairs(Stage.GRAPH, ranked),
        tuple(hits),
        tuple(RelationHit(relation_id(t), t, w) for t, w in relations[: config.max_relation_hits]),
    )


def score_hits(hits: list[GraphHit], degree: dict[str, int], config: GraphConfig, limit: int) -> GraphResult:
    """``expand``: documents and relations scored from the reached triples by hop and seed degree."""
    weights = [hit_weight(hit, degree, config.hop_decay) for hit in hits]
    doc_scores: dict[str, float] = defaultdict(float)
    for hit, w in zip(hits, weights):
        doc_scores[hit.triple.doc_id] += w
    return _result(hits, doc_scores, weights, config, limit)


def score_ppr(hits: list[GraphHit], seeds: list[str], degree: dict[str, int], query: str, config: GraphConfig,
              limit: int) -> GraphResult:
    """``ppr``: documents and relations scored by personalized PageRank mass."""
    sub = ppr.subgraph(seeds, hits)
    mass = ppr.pagerank(sub, ppr.seed_weights(query, seeds, degree, config.unnamed_seed_weight), config.damping)
    scores = {doc: s for doc, s in ppr.document_scores(sub, hits, mass).items() if s > 0}
    return _result(hits, scores, ppr.triple_scores(sub, mass), config, limit)


def graph(store: GraphStore, entity_keys: list[str], depth: int, limit: int, config: GraphConfig,
          query: str = "") -> GraphResult:
    """Triples within ``depth`` hops of the entities, scored into candidates."""
    if depth <= 0 or not entity_keys:
        return GraphResult.empty()
    hits = store.neighbourhood(entity_keys, depth, config.max_hits)
    degree = store.degree(entity_keys)
    if config.method is GraphMethod.PPR:
        return score_ppr(hits, list(dict.fromkeys(entity_keys)), degree, query, config, limit)
    return score_hits(hits, degree, config, limit)
