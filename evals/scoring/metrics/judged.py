"""Judged@k, the share of the top k that has a judgment (how far the labels reach), and bpref.

Judged@k (Sakai 2007; ir_measures' ``Judged@k``): judged documents among the
top ``k`` over ``k``, or over the ranking's length when it is shorter. A run
that surfaces documents nobody judged is scored as if they were not relevant;
Judged@k says how much of a score rests on that.

nDCG@k's bounds under partial labels (``ndcg_min@k``, ``ndcg_max@k``) are
:mod:`.ndcg_bounds`'.

bpref (Buckley & Voorhees 2004; trec_eval ``bpref``): each relevant document
retrieved scores 1 less the share of judged non-relevant documents ranked
above it, capped at ``min(R, N)``; unjudged documents do not count either way.
"""

from __future__ import annotations

import numpy as np

from searchtrace.evals.scoring.metrics.ranking import Ranking, ratio

__all__ = ["bpref", "judged"]


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
