"""Dense stage: nearest neighbours of the query vector (cosine).

With an index built with passage parts (``retriever.parts``) and a parts weight
``w`` > 0, a passage scores ``(1 - w) * cos(passage) + w * max cos(part)``: the
``depth * limit`` nearest passages by their own vector are rescored so (the
vector store computes both cosines in one call) and the best ``limit`` are kept.
"""

from __future__ import annotations

import numpy as np

from retriever.types import Candidates, Stage
from retriever.vectorstore.base import Hit, PartsHits, PayloadFilter, VectorStore


def to_candidates(stage: Stage, hits: list[Hit], doc_ids: np.ndarray) -> Candidates:
    """Map integer point ids to document ids."""
    if not hits:
        return Candidates.empty(stage)
    points = np.fromiter((h.id for h in hits), dtype=np.int64, count=len(hits))
    scores = np.fromiter((h.score for h in hits), dtype=np.float64, count=len(hits))
    return Candidates(stage, doc_ids[points], scores)


def blend(found: PartsHits, parts_weight: float, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """Point ids and blended scores, best first (ties by point id), at most ``limit``."""
    scores = (1.0 - parts_weight) * found.whole + parts_weight * found.best_part
    order = np.lexsort((found.ids, -scores))[:limit]
    return found.ids[order], scores[order]


def dense(store: VectorStore, vector: np.ndarray, limit: int, doc_ids: np.ndarray,
          flt: PayloadFilter | None = None, parts_weight: float = 0.0, depth: int = 2) -> Candidates:
    if parts_weight <= 0:
        return to_candidates(Stage.DENSE, store.search_dense(vector[None, :], limit, flt)[0], doc_ids)
    [found] = store.search_dense_parts(vector[None, :], limit * depth, flt)
    points, scores = blend(found, parts_weight, limit)
    return Candidates(Stage.DENSE, doc_ids[points], scores) if len(points) else Candidates.empty(Stage.DENSE)
