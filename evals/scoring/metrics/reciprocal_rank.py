"""Reciprocal rank of the first relevant document."""

from __future__ import annotations

import numpy as np

from searchtrace.evals.scoring.metrics.ranking import Ranking

__all__ = ["reciprocal_rank"]


def reciprocal_rank(ranking: Ranking, k: int | None) -> np.ndarray:
    """1 / rank of the first relevant document within the top ``k``; 0 if none."""
    relevant = ranking.relevant[:, :k]
    first = relevant.argmax(axis=1) if relevant.shape[1] else np.zeros(len(relevant), dtype=np.int64)
    return np.where(relevant.any(axis=1), 1.0 / (first + 1), 0.0)
