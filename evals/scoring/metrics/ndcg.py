"""Normalised discounted cumulative gain (Järvelin & Kekäläinen, 2002)."""

from __future__ import annotations

import numpy as np

from searchtrace.evals.scoring.metrics.ranking import Ranking, ratio

__all__ = ["dcg", "ndcg"]


def dcg(gains: np.ndarray) -> np.ndarray:
    """Row sums of ``gain_i / log2(i + 1)`` over ranks ``i = 1..depth``."""
    return (gains / np.log2(np.arange(2, gains.shape[1] + 2))).sum(axis=1)


def ndcg(ranking: Ranking, k: int | None) -> np.ndarray:
    """DCG of the top ``k`` over the ideal DCG of the top ``k`` (all ranks when None).

    Gains are the grades themselves (linear, trec_eval ``ndcg``); the ideal
    ranking orders all the query's relevant judgments by grade, retrieved or not.
    A query without a graded judgment scores 0.
    """
    return ratio(dcg(ranking.gains[:, :k]), dcg(ranking.ideal[:, :k]))
