"""The ``MemoryGraph`` as integer arrays: a CSR adjacency and one row per relation.

Built once per graph state (after ``connect`` or the first search after a
``load``), so a search touches numpy arrays instead of Python lists and tuples.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np


@dataclass(frozen=True)
class GraphArrays:
    """Entity adjacency and relation columns of a graph with ``E`` entities and ``R`` relations.

    Attributes:
        indptr: ``relations[indptr[e]:indptr[e + 1]]`` are the relations touching
            entity ``e`` (a self-loop once), in the order they were added; ``E + 1`` ints.
        degree: ``indptr[e + 1] - indptr[e]``.
        relations: relation ids, entity by entity.
        subject: subject entity of each relation (``R`` ints).
        object: object entity of each relation.
        order: rank of each relation's triple ``(subject name, relation, object name, doc id)``
            in sorted order; equal triples share a rank.
        doc: of each relation's document: an index into ``doc_ids``.
        doc_ids: the distinct document ids, sorted (object array of ``str``).
    """

    indptr: np.ndarray
    degree: np.ndarray
    relations: np.ndarray
    subject: np.ndarray
    object: np.ndarray
    order: np.ndarray
    doc: np.ndarray
    doc_ids: np.ndarray


def dense_rank(keys: Sequence) -> np.ndarray:
    """Rank of each key in sorted order, equal keys sharing one (``[b, a, b]`` -> ``[1, 0, 1]``)."""
    by_key = sorted(range(len(keys)), key=keys.__getitem__)
    rank = np.empty(len(keys), dtype=np.int64)
    current, previous = -1, object()
    for i in by_key:
        if current < 0 or keys[i] != previous:
            current, previous = current + 1, keys[i]
        rank[i] = current
    return rank


def intern_sorted(values: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(index, distinct)``: the sorted distinct values and each value's index among them."""
    distinct = sorted(set(values))
    position = {v: i for i, v in enumerate(distinct)}
    index = np.fromiter((position[v] for v in values), dtype=np.int64, count=len(values))
    return index, np.array(distinct, dtype=object)


def build_arrays(adjacency: Sequence[Sequence[int]], rels: Sequence[tuple[int, str, int, str]],
                 names: Sequence[str]) -> GraphArrays:
    """Arrays of a graph held as per-entity relation-id lists and ``(s, relation, o, doc id)`` rows."""
    counts = np.fromiter(map(len, adjacency), dtype=np.int64, count=len(adjacency))
    indptr = np.zeros(len(adjacency) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    relations = np.fromiter(chain.from_iterable(adjacency), dtype=np.int64, count=int(indptr[-1]))
    subject = np.fromiter((r[0] for r in rels), dtype=np.int64, count=len(rels))
    obj = np.fromiter((r[2] for r in rels), dtype=np.int64, count=len(rels))
    order = dense_rank([(names[s], relation, names[o], d) for s, relation, o, d in rels])
    doc, doc_ids = intern_sorted([r[3] for r in rels])
    return GraphArrays(indptr, counts, relations, subject, obj, order, doc, doc_ids)
