"""Personalized PageRank over the triples around the query's entities.

HippoRAG (Gutiérrez et al. 2024) retrieves multi-hop evidence by spreading
relevance over a knowledge graph from the entities a question names, with
personalized (topic-sensitive) PageRank (Haveliwala 2002), and scores each
passage by the PageRank mass of the entities it contains. Here the graph is the
subgraph ``GraphStore.neighbourhood`` returns (the triples within ``depth`` hops
of the seeds), so every backend supports it through the same protocol calls.

* Nodes: the entity keys of those triples; edges: the triples, undirected.
* Seeds ``s``: the detected entities, each weighing ``name / degree``: node
  specificity (HippoRAG's inverse passage count; the degree is the protocol's
  proxy) times ``name`` = 1 when the query writes the entity as a name
  (a capitalized word past the first, or a digit) else ``unnamed_seed_weight``,
  so "country" or "author" matched in a question do not flood the walk.
* Walk: ``x = (1 - d) s + d P x`` with ``P[i, j] = A[i, j] / deg(j)``, by power
  iteration (L1 change < 1e-6, at most 200 steps).
* A document scores the sum of the mass of the entities its triples mention; a
  triple scores the mass of its subject plus its object.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from retriever.graph.normalize import normalize_name
from retriever.stages.keyword import name_words
from retriever.types import GraphHit

MAX_ITERATIONS = 200
TOLERANCE = 1e-6


@dataclass(frozen=True)
class Subgraph:
    """The reached triples as integer edges.

    Attributes:
        keys: node (entity key) of each index; the seeds come first.
        subject: node of each hit's subject.
        object: node of each hit's object.
    """

    keys: tuple[str, ...]
    subject: np.ndarray
    object: np.ndarray


def subgraph(seeds: Sequence[str], hits: Sequence[GraphHit]) -> Subgraph:
    """Intern the hits' endpoints (seeds first)."""
    node = {k: i for i, k in enumerate(seeds)}
    ends = np.empty((len(hits), 2), dtype=np.int64)
    for row, hit in enumerate(hits):
        for col, name in enumerate((hit.triple.subject, hit.triple.object)):
            ends[row, col] = node.setdefault(normalize_name(name), len(node))
    return Subgraph(tuple(node), ends[:, 0], ends[:, 1])


def seed_weights(query: str, seeds: Sequence[str], degree: dict[str, int], unnamed: float) -> np.ndarray:
    """Restart weights of the seeds (summing to 1; uniform when all would be 0)."""
    named = {normalize_name(w) for w in name_words(query)}
    w = np.array([(1.0 if named & set(k.split()) else unnamed) / max(1, degree.get(k, 1)) for k in seeds])
    total = float(w.sum())
    return w / total if total > 0 else np.full(len(seeds), 1.0 / max(1, len(seeds)))


def pagerank(graph: Subgraph, restart: np.ndarray, damping: float) -> np.ndarray:
    """Personalized PageRank mass of every node; ``restart`` covers the first nodes (the seeds)."""
    n = len(graph.keys)
    s = np.zeros(n)
    s[: len(restart)] = restart
    loops = graph.subject == graph.object
    src = np.concatenate([graph.subject, graph.object[~loops]])  # each triple both ways, a loop once
    dst = np.concatenate([graph.object, graph.subject[~loops]])
    degree = np.bincount(dst, minlength=n).astype(np.float64)
    x = s
    for _ in range(MAX_ITERATIONS):
        spread = np.bincount(src, weights=x[dst] / degree[dst], minlength=n) if len(dst) else np.zeros(n)
        nxt = (1.0 - damping) * s + damping * spread
        nxt += (1.0 - nxt.sum()) * s  # mass on nodes without edges restarts
        done = float(np.abs(nxt - x).sum()) < TOLERANCE
        x = nxt
        if done:
            break
    return x


def document_scores(graph: Subgraph, hits: Sequence[GraphHit], mass: np.ndarray) -> dict[str, float]:
    """Each document: the summed mass of the distinct entities its triples mention."""
    seen: dict[str, set[int]] = {}
    for hit, s, o in zip(hits, graph.subject.tolist(), graph.object.tolist()):
        seen.setdefault(hit.triple.doc_id, set()).update((s, o))
    return {doc: float(mass[list(nodes)].sum()) for doc, nodes in seen.items()}


def triple_scores(graph: Subgraph, mass: np.ndarray) -> np.ndarray:
    """Each hit: its subject's mass plus its object's."""
    return mass[graph.subject] + mass[graph.object]
