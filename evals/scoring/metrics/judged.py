"""Judged@k, the share of the top k that has a judgment (how far the labels reach), nDCG's upper bound, and bpref.

Judged@k (Sakai 2007; ir_measures' ``Judged@k``): judged documents among the
top ``k`` over ``k``, or over the ranking's length when it is shorter. A run
that surfaces documents nobody judged is scored as if they were not relevant;
Judged@k says how much of a score rests on that.

nDCG@k's bounds: ``ndcg@k`` counts unjudged documents as not relevant, the
lower bound; ``ndcg_max@k`` counts every unjudged document of the top ``k`` as
relevant, with the lowest relevant grade, in the ranking and in the ideal one:
the upper bound. Between them lies every value full labels could give.

bpref (Buckley & Voorhees 2004; trec_eval ``bpref``): each relevant document
retrieved scores 1 less the share of judged non-relevant documents ranked
above it, capped at ``min(R, N)``; unjudged documents do not count either way.
"""

from __future__ import annotations

import numpy as np

from searchtrace.evals.scoring.metrics.ranking import Ranking, ratio

__all__ = ["bpref", "judged", "ndcg_max"]


def judged(ranking: Ranking, k: int | None) -> np.ndarray:
    """Judged@k per query (0 for a query that ranks nothing)."""
    if k is None:
        raise ValueError("judged needs a cutoff")
    if ranking.judged is None or ranking.length is None:
        raise ValueError("this ranking does not know which documents are judged")
    return ratio(ranking.judged[:, :k].sum(axis=1), np.minimum(ranking.length, k))


def bpref(ranking: Ranking, k: int | None = None) -> np.ndarray:
    """bpref per query, as trec_eval computes it (0 without a relevant document)."""
    if ranking.judged is None or ranking.n_nonrel is None or ranking.negative is None:
        raise ValueError("this ranking does not know which documents are judged")
    relevant = ranking.relevant
    nonrel = ranking.judged & ~relevant & ~ranking.negative
    above = np.cumsum(nonrel, axis=1) - nonrel  # judged non-relevant documents ranked above each rank
    cap = np.minimum(ranking.n_rel, ranking.n_nonrel)[:, None].astype(np.float64)
    penalty = ratio(np.minimum(above, cap), np.broadcast_to(cap, above.shape))
    score = np.where(relevant, 1.0 - penalty, 0.0).sum(axis=1)
    return ratio(score, ranking.n_rel)


def ndcg_max(ranking: Ranking, k: int | None) -> np.ndarray:
    """nDCG@k with each unjudged document of the top ``k`` taken as relevant (grade ``level``): the upper bound."""
    from searchtrace.evals.scoring.metrics.ndcg import dcg

    if k is None:
        raise ValueError("ndcg_max needs a cutoff")
    if ranking.judged is None or ranking.length is None:
        raise ValueError("this ranking does not know which documents are judged")
    depth = ranking.gains.shape[1]
    ranked = np.arange(depth)[None, :] < ranking.length[:, None]
    unjudged = ranked & ~ranking.judged
    gains = np.where(unjudged, float(ranking.level), ranking.gains)[:, :k]
    extra = np.where(np.arange(k)[None, :] < unjudged[:, :k].sum(axis=1)[:, None], float(ranking.level), 0.0)
    ideal = -np.sort(-np.concatenate([ranking.ideal, extra], axis=1), axis=1)[:, :k]
    return ratio(dcg(gains), dcg(ideal))
