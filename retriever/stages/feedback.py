"""Feedback stage: dense pseudo-relevance feedback (Rocchio 1971), off by default.

The first fused list's top ``docs`` documents are taken as relevant and the
query vector moves towards them, ``q' = q + beta * mean(d_1 .. d_k)`` (unit
length again), for a second dense search whose list replaces the first.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from searchtrace.retriever.config.model import FeedbackConfig
from searchtrace.retriever.stages.dense import dense
from searchtrace.retriever.types import Candidates
from searchtrace.retriever.vectorstore.base import PayloadFilter, VectorStore


def rocchio(query: np.ndarray, docs: np.ndarray, beta: float) -> np.ndarray:
    """``q + beta * mean(docs)``, unit length; ``query`` itself when there are no docs."""
    if len(docs) == 0:
        return query
    moved = query.astype(np.float64) + beta * docs.astype(np.float64).mean(axis=0)
    norm = float(np.linalg.norm(moved))
    return (moved / norm if norm > 0 else moved).astype(np.float32)


def feedback_dense(store: VectorStore, vector: np.ndarray, top: Sequence[str], config: FeedbackConfig, limit: int,
                   doc_ids: np.ndarray, point_of: dict[str, int],
                   flt: PayloadFilter | None = None, parts_weight: float = 0.0,
                   parts_depth: int = 2, doc_vectors: np.ndarray | None = None) -> tuple[Candidates, tuple[str, ...]]:
    """The dense list for the moved query, and the feedback documents used (``top``: the first
    fusion's best ids, ``config.docs`` of them)."""
    rows = store.retrieve([point_of[i] for i in top if i in point_of], with_vectors=True)
    vectors = np.array([vec for _, _, vec in rows if vec is not None], dtype=np.float32).reshape(-1, len(vector))
    moved = rocchio(vector, vectors, config.weight)
    return dense(store, moved, limit, doc_ids, flt, parts_weight, parts_depth, doc_vectors), tuple(top)
