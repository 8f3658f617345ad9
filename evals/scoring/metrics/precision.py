"""Precision at a cutoff and R-precision."""

from __future__ import annotations

import numpy as np

from searchtrace.evals.scoring.metrics.ranking import Ranking, ratio

__all__ = ["precision", "r_precision"]


def precision(ranking: Ranking, k: int | None) -> np.ndarray:
    """P@k: relevant documents in the top ``k`` over ``k``.

    Ranks past the end of a short ranking count as non-relevant (trec_eval
    ``P_k``), so the denominator is always ``k``.
    """
    if k is None:
        raise ValueError("precision needs a cutoff")
    return ranking.relevant[:, :k].sum(axis=1) / k


def r_precision(ranking: Ranking, k: int | None = None) -> np.ndarray:
    """R-precision: precision at rank R, the query's number of relevant documents."""
    hits = np.cumsum(ranking.relevant, axis=1)
    hits = np.concatenate([np.zeros((len(hits), 1)), hits], axis=1)
    at = np.minimum(ranking.n_rel, hits.shape[1] - 1)
    return ratio(hits[np.arange(len(at)), at], ranking.n_rel)
