"""Recall and hit rate at a cutoff."""

from __future__ import annotations

import numpy as np

from searchtrace.evals.metrics.ranking import Ranking

__all__ = ["hit", "recall"]


def recall(ranking: Ranking, k: int | None) -> np.ndarray:
    """Relevant documents in the top ``k`` (all ranks when None) over all relevant ones."""
    return ranking.relevant[:, :k].sum(axis=1) / ranking.n_rel


def hit(ranking: Ranking, k: int | None) -> np.ndarray:
    """1.0 when a relevant document is in the top ``k``, else 0.0 (trec_eval ``success_k``)."""
    return ranking.relevant[:, :k].any(axis=1).astype(np.float64)
