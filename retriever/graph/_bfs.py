"""``_traverse.traverse`` as array operations over ``GraphArrays`` (the ``MemoryGraph`` hot path).

The same multi-source BFS, one vectorized step per hop: gather the relations
touching the frontier from the CSR adjacency, keep those not found at an
earlier hop, give each the smallest seed position among its frontier ends, and
label the unlabeled ends for the next hop. Which relations a hop finds, and
their seeds, do not depend on the order the frontier is visited, so the result
equals ``traverse``'s (tested against it on random graphs).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from searchtrace.retriever.graph._csr import GraphArrays


class Found(NamedTuple):
    """Relations within reach, ranked nearest first and cut at the limit; parallel arrays."""

    relations: np.ndarray  # relation ids
    hops: np.ndarray  # 1..depth
    seeds: np.ndarray  # position of the earliest nearest seed


def touching(arrays: GraphArrays, nodes: np.ndarray, tags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(relations, their_tags)``: every relation touching ``nodes``, node by node, and the tag of its node."""
    counts = arrays.degree[nodes]
    stops = np.cumsum(counts)
    total = int(stops[-1]) if len(stops) else 0
    at = np.arange(total) + np.repeat(arrays.indptr[nodes] - (stops - counts), counts)
    return arrays.relations[at], np.repeat(tags, counts)


def min_per_key(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``keys`` (ascending) and the smallest of the ``values`` given with each."""
    by = np.lexsort((values, keys))
    keys, values = keys[by], values[by]
    first = np.ones(len(keys), dtype=bool)
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    return keys[first], values[first]


def search(arrays: GraphArrays, seeds: np.ndarray, depth: int, limit: int) -> Found:
    """Relations within ``depth`` hops of ``seeds`` (entity ids; negative = not in the graph).

    Ordered by ``(hops, seed position, triple)`` and cut at ``limit``; the search
    stops once a finished hop reaches ``limit``, as ``traverse`` does.
    """
    reached = np.zeros(len(arrays.indptr) - 1, dtype=bool)  # entities at a known distance
    found = np.zeros(len(arrays.subject), dtype=bool)  # relations found at an earlier hop
    label = np.flatnonzero(seeds >= 0)  # of each frontier entity: its earliest nearest seed's position
    frontier = seeds[label]
    reached[frontier] = True
    levels: list[tuple[np.ndarray, np.ndarray]] = []
    total = 0
    for _ in range(depth):
        if not len(frontier) or total >= limit:
            break
        rels, tags = touching(arrays, frontier, label)
        fresh = ~found[rels]
        rels, seed = min_per_key(rels[fresh], tags[fresh])
        found[rels] = True
        levels.append((rels, seed))
        total += len(rels)
        ends = np.concatenate((arrays.subject[rels], arrays.object[rels]))
        new = ~reached[ends]
        frontier, label = min_per_key(ends[new], np.concatenate((seed, seed))[new])
        reached[frontier] = True
    return _ranked(arrays, levels, len(seeds), limit)


def _ranked(arrays: GraphArrays, levels: list[tuple[np.ndarray, np.ndarray]], n_seeds: int, limit: int) -> Found:
    """The found relations sorted by ``(hops, seed, triple)``, the first ``limit``."""
    if not levels:
        empty = np.empty(0, dtype=np.int64)
        return Found(empty, empty, empty)
    rels = np.concatenate([r for r, _ in levels])
    seeds = np.concatenate([s for _, s in levels])
    hops = np.repeat(np.arange(1, len(levels) + 1), [len(r) for r, _ in levels])
    key = (hops * n_seeds + seeds) * len(arrays.order) + arrays.order[rels]  # ranks < len(order)
    pick = np.argpartition(key, limit - 1)[:limit] if 0 < limit < len(key) else np.arange(min(limit, len(key)))
    pick = pick[np.argsort(key[pick], kind="stable")]
    return Found(rels[pick], hops[pick], seeds[pick])
