"""Breadth-first neighbourhood search, the definition every backend meets.

A backend supplies one call, ``expand(keys)``: the relations touching any of
``keys``. The search asks it once per hop, so a server backend runs at most
``depth`` one-hop queries and never a variable-length pattern. ``MemoryGraph``
runs the same search as array operations (``_bfs``), tested equal to this one.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass

from searchtrace.errors import ValidationError
from searchtrace.retriever.types import GraphHit, Triple

DEPTHS = (1, 2, 3)


@dataclass(frozen=True, slots=True)
class Edge:
    """A relation seen by the search: a backend-unique id, endpoint keys and the triple."""

    id: Hashable
    subject: str
    object: str
    triple: Triple


Expand = Callable[[list[str]], Iterable[Edge]]


def check_depth_limit(depth: int, limit: int) -> None:
    """Raise ``ValidationError`` unless ``depth`` is 1, 2 or 3 and ``limit`` an int >= 0."""
    if isinstance(depth, bool) or not isinstance(depth, int) or depth not in DEPTHS:
        raise ValidationError(f"depth must be one of {list(DEPTHS)}, got {depth!r}", field="depth")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ValidationError(f"limit must be an int >= 0, got {limit!r}", field="limit")


def traverse(seeds: Sequence[str], depth: int, limit: int, expand: Expand) -> list[GraphHit]:
    """Relations within ``depth`` hops of ``seeds``, nearest first.

    Multi-source BFS over undirected relation edges. A relation's ``hops`` is
    one more than the distance of its nearer endpoint to the nearest seed; its
    ``seed`` is the earliest seed (in ``seeds`` order) at that distance. Hits
    are ordered by ``(hops, seed position, subject, relation, object, doc_id)``
    and cut at ``limit``; the search stops once a finished hop reaches it.

    Args:
        seeds: distinct entity keys.
        depth: 1..3.
        limit: most hits returned.
        expand: the relations touching any of the given keys.
    """
    # label[key] = (distance, index of its earliest nearest seed)
    label: dict[str, tuple[int, int]] = {k: (0, i) for i, k in enumerate(seeds)}
    found: dict[Hashable, tuple[int, int, Triple]] = {}
    frontier = list(seeds)
    for level in range(depth):
        if not frontier or len(found) >= limit:
            break
        reached: dict[str, int] = {}
        for edge in expand(frontier):
            if edge.id in found:
                continue
            ends = (edge.subject, edge.object)
            near = [label[k][1] for k in ends if k in label and label[k][0] == level]
            if not near:  # both ends farther: cannot come from a frontier query
                continue
            seed = min(near)
            found[edge.id] = (level + 1, seed, edge.triple)
            for k in ends:
                if k not in label:
                    reached[k] = min(reached.get(k, seed), seed)
        label.update({k: (level + 1, s) for k, s in reached.items()})
        frontier = sorted(reached)
    ranked = sorted(found.values(), key=lambda h: (h[0], h[1], h[2].subject, h[2].relation, h[2].object, h[2].doc_id))
    return [GraphHit(triple, hops, seeds[seed]) for hops, seed, triple in ranked[:limit]]
