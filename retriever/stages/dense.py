"""Dense stage: nearest neighbours of the query vector (cosine)."""

from __future__ import annotations

import numpy as np

from retriever.types import Candidates, Stage
from retriever.vectorstore.base import Hit, PayloadFilter, VectorStore


def to_candidates(stage: Stage, hits: list[Hit], doc_ids: np.ndarray) -> Candidates:
    """Map integer point ids to document ids."""
    if not hits:
        return Candidates.empty(stage)
    points = np.fromiter((h.id for h in hits), dtype=np.int64, count=len(hits))
    scores = np.fromiter((h.score for h in hits), dtype=np.float64, count=len(hits))
    return Candidates(stage, doc_ids[points], scores)


def dense(store: VectorStore, vector: np.ndarray, limit: int, doc_ids: np.ndarray,
          flt: PayloadFilter | None = None) -> Candidates:
    hits = store.search_dense(vector[None, :], limit, flt)[0]
    return to_candidates(Stage.DENSE, hits, doc_ids)
