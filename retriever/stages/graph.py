"""Graph stage: triples around the query's entities, and the documents behind them.

Two ways to score them (``GraphConfig.method``):

* ``ppr`` (default): personalized PageRank over the reached triples, seeded by
  the query's entities (HippoRAG; see ``retriever.stages.ppr``) and by those of
  the best first-pass passages (``GraphConfig.seed_docs``): a multi-hop
  question names its first hop, whose passage names the bridge to the next.
* ``expand``: a triple ``h`` hops from a query entity ``e`` weighs
  ``decay ** (h - 1) / log2(1 + degree(e))``: near triples count more, and
  triples reached from a hub entity count less. A document scores the sum of
  the weights of the triples it contributed.

A relation hit scores its triple's weight (its endpoints' mass under ``ppr``). A fact
(subject, relation, object) extracted from several documents is one relation hit
naming each of them, scored its best triple's weight.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from searchtrace.names import Stage
from searchtrace.retriever.config.model import GraphConfig
from searchtrace.retriever.graph.base import GraphStore
from searchtrace.retriever.graph.reach import Reach, reach
from searchtrace.retriever.stages import ppr
from searchtrace.retriever.types import Candidates, GraphHit, GraphMethod, Triple


@dataclass(frozen=True)
class RelationMatch:
    """One fact reached: its best triple, its weight, and every document the fact was reached in.

    ``doc_ids`` starts with ``triple.doc_id``; the rest follow by their triple's weight, so a
    response can name every source of the fact in one hit.
    """

    id: str
    triple: Triple
    score: float
    doc_ids: tuple[str, ...] = ()

    def within(self, allowed: set[str]) -> RelationMatch | None:
        """The same fact named by only its documents in ``allowed`` (None when none is)."""
        docs = tuple(d for d in self.sources if d in allowed)
        if not docs:
            return None
        t = self.triple
        return RelationMatch(self.id, Triple(t.subject, t.relation, t.object, docs[0]), self.score, docs)

    @property
    def sources(self) -> tuple[str, ...]:
        """The documents the fact came from (its triple's alone when none were listed)."""
        return self.doc_ids or (self.triple.doc_id,)


@dataclass(frozen=True)
class GraphResult:
    docs: Candidates
    hits: tuple[GraphHit, ...]
    relations: tuple[RelationMatch, ...]

    @classmethod
    def empty(cls) -> GraphResult:
        return cls(Candidates.empty(Stage.GRAPH), (), ())


def relation_id(t: Triple) -> str:
    """The fact's id: its subject, relation and object, whichever documents it came from."""
    digest = hashlib.sha1("\x1f".join(t.key()[:3]).encode("utf-8")).hexdigest()[:16]
    return f"rel:{digest}"


def hit_weight(hit: GraphHit, degree: dict[str, int], decay: float) -> float:
    return decay ** (hit.hops - 1) / math.log2(1 + max(1, degree.get(hit.seed, 1)))


def ranked_documents(found: Reach, docs: np.ndarray, scores: np.ndarray, limit: int) -> Candidates:
    """The first ``limit`` of ``docs`` (ascending indexes into ``found.doc_ids``) by score, ties by id."""
    best = np.argsort(-scores, kind="stable")[:limit]
    return Candidates(Stage.GRAPH, found.doc_ids[docs[best]], scores[best].astype(np.float64))


def best_relations(found: Reach, weights: np.ndarray, n: int) -> tuple[RelationMatch, ...]:
    """The ``n`` distinct facts of highest weight (a fact's best triple), ties by triple; each names every
    document its fact was reached in, best triple first."""
    chosen: dict[tuple[str, str, str], list[int]] = {}
    for i in np.lexsort((found.order, -weights)).tolist():
        fact = found.hits[i].triple.key()[:3]
        if fact in chosen:
            chosen[fact].append(i)
        elif len(chosen) < n:
            chosen[fact] = [i]
    out: list[RelationMatch] = []
    for rows in chosen.values():
        t = found.hits[rows[0]].triple
        docs = tuple(dict.fromkeys(found.hits[i].triple.doc_id for i in rows))
        out.append(RelationMatch(relation_id(t), t, float(weights[rows[0]]), docs))
    return tuple(out)


def score_hits(found: Reach, degree: dict[str, int], config: GraphConfig, limit: int) -> GraphResult:
    """``expand``: documents and relations scored from the reached triples by hop and seed degree."""
    weights = np.array([hit_weight(hit, degree, config.hop_decay) for hit in found.hits], dtype=np.float64)
    docs, local = np.unique(found.doc, return_inverse=True)
    scores = np.bincount(local, weights=weights, minlength=len(docs))  # in hit order, as a running sum
    return GraphResult(ranked_documents(found, docs, scores, limit), found.hits,
                       best_relations(found, weights, config.max_relation_hits))


def score_ppr(found: Reach, seeds: list[str], doc_seeds: list[str], degree: dict[str, int], query: str,
              config: GraphConfig, limit: int) -> GraphResult:
    """``ppr``: documents and relations scored by personalized PageRank mass."""
    sub = ppr.subgraph(found)
    restart = ppr.restart_weights(query, seeds, doc_seeds, degree, config.unnamed_seed_weight, config.seed_docs_weight)
    mass = ppr.pagerank(sub, restart, config.damping)
    docs, scores = ppr.document_scores(sub, found.doc.tolist(), mass)
    positive = scores > 0
    return GraphResult(ranked_documents(found, docs[positive], scores[positive], limit), found.hits,
                       best_relations(found, ppr.triple_scores(sub, mass), config.max_relation_hits))


def graph(store: GraphStore, entity_keys: list[str], depth: int, limit: int, config: GraphConfig,
          query: str = "", seed_docs: Sequence[str] = ()) -> GraphResult:
    """Triples within ``depth`` hops of the entities, scored into candidates.

    ``seed_docs`` (ppr only): first-pass passages whose entities seed the walk
    too, with ``config.seed_docs_weight`` of the restart mass.
    """
    seeds = list(dict.fromkeys(entity_keys))
    ppr_method = config.method is GraphMethod.PPR
    doc_seeds: list[str] = []
    if ppr_method and seed_docs and depth > 0 and config.seed_docs_weight > 0:
        named = set(seeds)
        for keys in store.document_entities(seed_docs).values():
            doc_seeds.extend(k for k in keys if k not in named)
            named.update(keys)
    if depth <= 0 or not (seeds or doc_seeds):
        return GraphResult.empty()
    found = reach(store, seeds + doc_seeds, depth, config.max_hits)
    degree = store.degree(seeds + doc_seeds)
    if ppr_method:
        return score_ppr(found, seeds, doc_seeds, degree, query, config, limit)
    return score_hits(found, degree, config, limit)
