"""Recall and hit rate at a cutoff."""

from __future__ import annotations

import numpy as np

from searchtrace.evals.scoring.metrics.ranking import Ranking, ratio

__all__ = ["hit", "recall"]


def recall(ranking: Ranking, k: int | None) -> np.ndarray:
    """Relevant documents in the top ``k`` (all ranks when None) over all relevant ones."""
    found: np.ndarray = ranking.relevant[:, :k].sum(axis=1)
    return ratio(found, ranking.n_rel)


def hit(ranking: Ranking, k: int | None) -> np.ndarray:
    """1.0 when a relevant document is in the top ``k``, else 0.0 (trec_eval ``success_k``)."""
    return np.asarray(ranking.relevant[:, :k].any(axis=1), dtype=np.float64)
