"""Personalized PageRank over the triples around the query's entities.

HippoRAG (Gutiérrez et al. 2024) retrieves multi-hop evidence by spreading
relevance over a knowledge graph from the entities a question names, with
personalized (topic-sensitive) PageRank (Haveliwala 2002), and scores each
passage by the PageRank mass of the entities it contains. Here the graph is the
subgraph ``GraphStore.neighbourhood`` returns (the triples within ``depth`` hops
of the seeds), so every backend supports it through the same protocol calls.

* Nodes: the entities of those triples; edges: the triples, undirected.
* Seeds ``s``: the detected entities (and, with ``GraphConfig.seed_docs``,
  those of the best first-pass passages; ``restart_weights``), each weighing ``name / degree``: node
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
from itertools import chain

import numpy as np

from searchtrace.retriever.graph.normalize import normalize_name
from searchtrace.retriever.graph.reach import Reach
from searchtrace.retriever.stages.keyword import name_words

MAX_ITERATIONS = 200
TOLERANCE = 1e-6
PAIRWISE_FROM = 8  # numpy sums 8 or more float64 terms pairwise, fewer one after another


@dataclass(frozen=True)
class Subgraph:
    """The reached triples as edges between nodes ``0..size - 1``.

    Attributes:
        ids: the ``Reach`` entity id of each node, the seeds first, then the
            entities in the order the hits first mention them.
        subject: node of each hit's subject.
        object: node of each hit's object.
    """

    ids: np.ndarray
    subject: np.ndarray
    object: np.ndarray

    @property
    def size(self) -> int:
        return len(self.ids)


def first_seen(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct, number)``: the distinct values in order of first appearance, and the
    position in ``distinct`` of each value (``[7, 3, 7, 5]`` -> ``[7, 3, 5], [0, 1, 0, 2]``)."""
    by_value = np.argsort(values, kind="stable")
    ordered = values[by_value]
    new = np.ones(len(values), dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    first = by_value[new]  # where each distinct value first appears, by value
    by_first = np.argsort(first)
    rank = np.empty(len(first), dtype=np.int64)
    rank[by_first] = np.arange(len(first))
    number = np.empty(len(values), dtype=np.int64)
    number[by_value] = rank[np.cumsum(new) - 1]
    return ordered[new][by_first], number


def subgraph(reach: Reach) -> Subgraph:
    """Number the seeds and the hits' endpoints by first appearance (seeds first)."""
    n = len(reach.seeds)
    ids, nodes = first_seen(np.concatenate((reach.seeds, np.column_stack((reach.subject, reach.object)).ravel())))
    return Subgraph(ids, nodes[n::2], nodes[n + 1 :: 2])


def seed_weights(query: str, seeds: Sequence[str], degree: dict[str, int], unnamed: float) -> np.ndarray:
    """Restart weights of the seeds (summing to 1; uniform when all would be 0)."""
    named = {normalize_name(w) for w in name_words(query)}
    w = np.array([(1.0 if named & set(k.split()) else unnamed) / max(1, degree.get(k, 1)) for k in seeds])
    total = float(w.sum())
    return w / total if total > 0 else np.full(len(seeds), 1.0 / max(1, len(seeds)))


def restart_weights(query: str, query_keys: Sequence[str], doc_keys: Sequence[str], degree: dict[str, int],
                    unnamed: float, doc_weight: float) -> np.ndarray:
    """Restart weights of ``query_keys`` then ``doc_keys`` (summing to 1).

    The query's entities weigh as in ``seed_weights`` and together 1; the
    entities of the first-pass passages weigh ``1 / degree`` and together
    ``doc_weight`` (all of it when the query names no entity).
    """
    own = seed_weights(query, query_keys, degree, unnamed) if query_keys else np.zeros(0)
    if not doc_keys:
        return own  # as seed_weights gives them, to the last bit
    w = np.array([1.0 / max(1, degree.get(k, 1)) for k in doc_keys])
    w = np.concatenate((own, doc_weight * w / w.sum()))
    total = float(w.sum())
    return w / total if total > 0 else np.full(len(w), 1.0 / max(1, len(w)))


def pagerank(graph: Subgraph, restart: np.ndarray, damping: float) -> np.ndarray:
    """Personalized PageRank mass of every node; ``restart`` covers the first nodes (the seeds)."""
    n = graph.size
    s = np.zeros(n)
    s[: len(restart)] = restart
    loops = graph.subject == graph.object
    src = np.concatenate([graph.subject, graph.object[~loops]])  # each triple both ways, a loop once
    dst = np.concatenate([graph.object, graph.subject[~loops]])
    degree = np.bincount(dst, minlength=n).astype(np.float64)
    degree[degree == 0] = 1.0  # a node no edge reaches sends nothing: any divisor will do
    base = (1.0 - damping) * s
    share, gap = np.empty(n), np.empty(n)
    x: np.ndarray = s
    for _ in range(MAX_ITERATIONS):
        # Written with out= buffers and ufunc.reduce for speed; the arithmetic, and so every
        # bit of the result, is that of the formula in the module docstring, step by step.
        np.divide(x, degree, out=share)
        nxt: np.ndarray = np.bincount(src, weights=share[dst], minlength=n) if len(src) else np.zeros(n)
        np.multiply(nxt, damping, out=nxt)
        np.add(base, nxt, out=nxt)
        np.multiply(s, 1.0 - np.add.reduce(nxt), out=gap)
        np.add(nxt, gap, out=nxt)  # mass on nodes without edges restarts
        np.subtract(nxt, x, out=gap)
        done = float(np.add.reduce(np.abs(gap, out=gap))) < TOLERANCE
        x = nxt
        if done:
            break
    return x


def entity_sets(doc: Sequence[int], graph: Subgraph) -> dict[int, set[int]]:
    """Each document's entities (subject, then object of each of its hits, in hit order)."""
    groups: dict[int, set[int]] = {}
    for d, s, o in zip(doc, graph.subject.tolist(), graph.object.tolist()):
        nodes = groups.get(d)
        if nodes is None:
            groups[d] = {s, o}
        else:
            nodes.add(s)
            nodes.add(o)
    return groups


def document_scores(graph: Subgraph, doc: Sequence[int], mass: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(docs, scores)``: the distinct values of ``doc`` (each hit's document), ascending, and
    each one's summed mass of the distinct entities its triples mention.

    The terms are added in the order of ``mass[list(entity_set)].sum()``, the
    first implementation: Python's set order, then numpy's running sum below 8
    terms and its pairwise sum from 8. Float addition is not associative, and
    exact ties between documents depend on that order, so keeping it keeps
    every score and ranking the same to the last bit.
    """
    groups = entity_sets(doc, graph)
    docs = np.fromiter(groups, dtype=np.int64, count=len(groups))
    sizes = np.fromiter(map(len, groups.values()), dtype=np.int64, count=len(groups))
    nodes = np.fromiter(chain.from_iterable(groups.values()), dtype=np.int64, count=int(sizes.sum()))
    scores = np.bincount(np.repeat(np.arange(len(docs)), sizes), weights=mass[nodes], minlength=len(docs))
    for i in np.flatnonzero(sizes >= PAIRWISE_FROM).tolist():  # bincount's running sum is not numpy's here
        scores[i] = mass[list(groups[int(docs[i])])].sum()
    by_doc = np.argsort(docs)
    return docs[by_doc], scores[by_doc].astype(np.float64)


def triple_scores(graph: Subgraph, mass: np.ndarray) -> np.ndarray:
    """Each hit: its subject's mass plus its object's."""
    return mass[graph.subject] + mass[graph.object]
