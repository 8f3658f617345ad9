"""Dense stage: nearest neighbours of the query vector (cosine).

With an index built with passage parts (``retriever.parts``) and a parts weight
``w`` > 0, a passage scores ``(1 - w) * cos(passage) + w * max cos(part)``: the
``depth * limit`` nearest passages by their own vector are rescored so and the
best ``limit`` kept. The vector store computes the best-part cosines (MaxSim, one
call); the passage cosines come from the index's copy of the passage vectors
(``OpenIndex.vectors``), which costs a row gather instead of a second search.
"""

from __future__ import annotations

import numpy as np

from searchtrace.names import Stage
from searchtrace.retriever.types import Candidates
from searchtrace.retriever.vectorstore.base import Hit, PayloadFilter, VectorStore


def to_candidates(stage: Stage, hits: list[Hit], doc_ids: np.ndarray) -> Candidates:
    """Map integer point ids to document ids."""
    if not hits:
        return Candidates.empty(stage)
    points = np.fromiter((h.id for h in hits), dtype=np.int64, count=len(hits))
    scores = np.fromiter((h.score for h in hits), dtype=np.float64, count=len(hits))
    return Candidates(stage, doc_ids[points], scores)


def blend(points: np.ndarray, whole: np.ndarray, best_part: np.ndarray, parts_weight: float,
          limit: int) -> tuple[np.ndarray, np.ndarray]:
    """Point ids and blended scores, best first (ties by point id), at most ``limit``."""
    scores = (1.0 - parts_weight) * whole + parts_weight * best_part
    order = np.lexsort((points, -scores))[:limit]
    return points[order], scores[order]


def dense(store: VectorStore, vector: np.ndarray, limit: int, doc_ids: np.ndarray,
          flt: PayloadFilter | None = None, parts_weight: float = 0.0, depth: int = 2,
          doc_vectors: np.ndarray | None = None) -> Candidates:
    """The ``limit`` best passages; blended with their best part when ``parts_weight`` > 0 and
    ``doc_vectors`` (row ``i`` = point ``i``'s passage vector) are given."""
    if parts_weight <= 0 or doc_vectors is None:
        return to_candidates(Stage.DENSE, store.search_dense(vector[None, :], limit, flt)[0], doc_ids)
    hits = store.search_best_parts(vector[None, :], limit * depth, flt)[0]
    if not hits:
        return Candidates.empty(Stage.DENSE)
    points = np.fromiter((h.id for h in hits), dtype=np.int64, count=len(hits))
    best = np.fromiter((h.score for h in hits), dtype=np.float64, count=len(hits))
    whole = np.asarray(doc_vectors[points], dtype=np.float32) @ np.asarray(vector, dtype=np.float32)
    points, scores = blend(points, whole.astype(np.float64), best, parts_weight, limit)
    return Candidates(Stage.DENSE, doc_ids[points], scores)
