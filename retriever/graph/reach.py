"""``Reach``: a neighbourhood's hits with integer columns beside them, for scoring as arrays.

``GraphStore.neighbourhood`` returns ``GraphHit`` objects. A backend that keeps
integer ids may also answer ``reach(entity_keys, depth, limit)`` with the columns
filled from them (``MemoryGraph`` does); for any other backend ``reach_from_hits``
derives them from the hits, keying endpoints with ``normalize_name`` as every
store keys its entities.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from searchtrace.retriever.graph._csr import dense_rank, intern_sorted
from searchtrace.retriever.graph._rows import key_list
from searchtrace.retriever.graph.base import GraphStore
from searchtrace.retriever.graph.normalize import normalize_name
from searchtrace.retriever.types import GraphHit


@dataclass(frozen=True)
class Reach:
    """The triples within reach of some seed entities, nearest first, and their integer columns.

    Attributes:
        hits: what ``GraphStore.neighbourhood`` returns for the seeds.
        seeds: entity id of each distinct seed, in seed order; a seed the graph
            lacks has an id no hit uses.
        subject: entity id of each hit's subject (the ids ``seeds`` uses).
        object: entity id of each hit's object.
        doc: of each hit's document: an index into ``doc_ids``.
        doc_ids: document ids, sorted, so indexes compare as ids do (object array of ``str``).
        order: of each hit's triple: a rank that compares as ``Triple.key()`` does
            (equal triples, equal ranks).
    """

    hits: tuple[GraphHit, ...]
    seeds: np.ndarray
    subject: np.ndarray
    object: np.ndarray
    doc: np.ndarray
    doc_ids: np.ndarray
    order: np.ndarray


def reach_from_hits(seeds: Sequence[str], hits: Sequence[GraphHit]) -> Reach:
    """The columns of ``hits`` around distinct ``seeds``: seeds are ids ``0..len(seeds) - 1``."""
    node = {k: i for i, k in enumerate(seeds)}
    names = (name for h in hits for name in (h.triple.subject, h.triple.object))
    ends = np.fromiter((node.setdefault(normalize_name(n), len(node)) for n in names), dtype=np.int64,
                       count=2 * len(hits))
    doc, doc_ids = intern_sorted([h.triple.doc_id for h in hits])
    order = dense_rank([h.triple.key() for h in hits])
    return Reach(tuple(hits), np.arange(len(seeds)), ends[0::2], ends[1::2], doc, doc_ids, order)


def reach(store: GraphStore, entity_keys: Iterable[str], depth: int, limit: int) -> Reach:
    """``store.reach`` when the backend has one, else its ``neighbourhood`` through ``reach_from_hits``."""
    own = getattr(store, "reach", None)
    if callable(own):
        return own(entity_keys, depth, limit)
    seeds = key_list(entity_keys, "entity_keys")
    return reach_from_hits(seeds, store.neighbourhood(seeds, depth, limit))
