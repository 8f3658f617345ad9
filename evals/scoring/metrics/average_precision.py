"""Average precision (the per-query term of MAP)."""

from __future__ import annotations

import numpy as np

from searchtrace.evals.scoring.metrics.ranking import Ranking, ratio

__all__ = ["average_precision"]


def average_precision(ranking: Ranking, k: int | None) -> np.ndarray:
    """Sum of precision at each relevant rank within the top ``k``, over all relevant documents.

    The denominator is the query's full number of relevant documents, retrieved
    or not, as in trec_eval ``map`` and ``map_cut_k``.
    """
    relevant = ranking.relevant[:, :k]
    precision_at = np.cumsum(relevant, axis=1) / np.arange(1, relevant.shape[1] + 1)
    return ratio((precision_at * relevant).sum(axis=1), ranking.n_rel)
