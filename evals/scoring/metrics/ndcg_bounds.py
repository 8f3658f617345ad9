"""nDCG@k's bounds under partial labels: the least and the greatest nDCG@k over every grading of the unjudged
documents of the top k.

Each unjudged document of the top ``k`` may take any grade ``0..G`` (``G``: the
top grade, :attr:`Ranking.top`); every other document keeps its label, an
unjudged one below ``k`` counting as not relevant. A grade raises the DCG and
may raise the ideal DCG more (an unjudged document at rank 10 graded high moves
the ideal's rank 1), so neither extreme is simply "all 0" or "all ``G``".

Exact, without enumerating the ``(G + 1) ** m`` gradings. Write a grading by
layers (the layer-cake sum of a descending list): ``a_g`` = unjudged documents
graded ``>= g``, so ``a_G <= ... <= a_1 <= m``. Then

* IDCG = ``sum_g S(min(k, r_g + a_g))``, with ``S(c)`` the sum of the first
  ``c`` discounts and ``r_g`` the query's judged documents graded ``>= g``;
* for given ``a``, DCG is greatest with the higher grades on the earlier
  unjudged ranks and least with them on the later ones (rearrangement), so
  DCG = ``C + sum_g P(a_g)``, ``P(a)`` the discounts of the first (for the
  least: the last) ``a`` unjudged ranks and ``C`` the judged documents' DCG.

A ratio of two such sums is extremised by Dinkelbach's method (Dinkelbach
1967: for the ratio ``N/D``, repeat ``lambda = N(x)/D(x)`` at the ``x`` that
extremises ``N - lambda D``; on a finite set it stops, exactly, at the optimum),
and ``N - lambda D`` separates over the layers but for the chain
``a_G <= ... <= a_1``: a dynamic programme over the layers, a suffix maximum
per layer. Queries are rows throughout. ``tests/evals/test_ndcg_bounds.py``
checks both bounds against every completion, exhaustively.
"""

from __future__ import annotations

import numpy as np

from searchtrace.evals.scoring.metrics.ranking import Ranking, ratio

__all__ = ["ndcg_max", "ndcg_min"]

_ROUNDS = 200
"""More Dinkelbach rounds than any query needs (each strictly improves the ratio; a handful suffice)."""


def ndcg_max(ranking: Ranking, k: int | None) -> np.ndarray:
    """The greatest nDCG@k any grading of the top k's unjudged documents gives."""
    return _bound(ranking, k, highest=True)


def ndcg_min(ranking: Ranking, k: int | None) -> np.ndarray:
    """The least nDCG@k any grading of the top k's unjudged documents gives."""
    return _bound(ranking, k, highest=False)


def _bound(ranking: Ranking, k: int | None, *, highest: bool) -> np.ndarray:
    if k is None:
        raise ValueError("the nDCG bounds need a cutoff")
    if ranking.judged is None or ranking.length is None:
        raise ValueError("this ranking does not know which documents are judged")
    n, w = ranking.gains.shape[0], min(k, ranking.gains.shape[1])
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    unjudged = (np.arange(w)[None, :] < ranking.length[:, None]) & ~ranking.judged[:, :w]
    m = unjudged.sum(axis=1)
    judged_dcg = (ranking.gains[:, :w] * discount[:w]).sum(axis=1)
    first = np.concatenate([np.zeros((n, 1)), np.cumsum(-np.sort(-(unjudged * discount[:w]), axis=1), axis=1)],
                           axis=1)  # (n, w+1): discounts of the first a unjudged ranks
    rows = np.arange(n)
    if highest:
        gain = first
    else:  # the last a unjudged ranks: all of them less the first m - a
        gain = first[rows, m][:, None] - first[rows[:, None], np.maximum(m[:, None] - np.arange(w + 1), 0)]
    ideal_sum = np.concatenate([[0.0], np.cumsum(discount)])
    grades = np.arange(1, max(ranking.top, 1) + 1)
    r = np.minimum((ranking.ideal[:, None, :] >= grades[None, :, None]).sum(axis=2), k)  # (n, G)
    ideal = ideal_sum[np.minimum(r[:, :, None] + np.arange(w + 1)[None, None, :], k)]  # (n, G, w+1)
    allowed = np.arange(w + 1)[None, :] <= m[:, None]
    start = m[:, None] * (1 if highest else 0)  # every unjudged at the top grade, or at 0
    lam = ratio(judged_dcg + gain[rows, start[:, 0]] * len(grades),
                ideal[rows[:, None], np.arange(len(grades))[None, :], start].sum(axis=1))
    for _ in range(_ROUNDS):
        num, den = _best(gain, ideal, allowed, lam, highest)
        num = num + judged_dcg
        gap = (num - lam * den) * (1 if highest else -1)
        moving = gap > 1e-12 * np.maximum(num, 1.0)
        if not moving.any():
            break
        lam = np.where(moving, ratio(num, den), lam)
    return lam


def _best(gain: np.ndarray, ideal: np.ndarray, allowed: np.ndarray, lam: np.ndarray,
          highest: bool) -> tuple[np.ndarray, np.ndarray]:
    """DCG part and IDCG of the layers ``a_G <= ... <= a_1`` that maximise ``+-(DCG - lam IDCG)``, per row."""
    sign = 1.0 if highest else -1.0
    value = np.zeros_like(gain)
    num = np.zeros_like(gain)
    den = np.zeros_like(gain)
    for g in range(ideal.shape[1]):  # layer 1 first; each later layer sits within the one before
        if g:
            value, num, den = _suffix_best(value, num, den)
        num, den = num + gain, den + ideal[:, g, :]
        value = np.where(allowed, sign * (num - lam[:, None] * den), -np.inf)
    at = np.argmax(value, axis=1)
    rows = np.arange(len(at))
    return num[rows, at], den[rows, at]


def _suffix_best(value: np.ndarray, num: np.ndarray, den: np.ndarray) -> tuple[np.ndarray, ...]:
    """At each ``a``, the best of columns ``a..`` (the chain: an earlier layer holds at least as many), with its
    parts."""
    value, num, den = value.copy(), num.copy(), den.copy()
    for a in range(value.shape[1] - 2, -1, -1):
        better = value[:, a + 1] > value[:, a]
        value[:, a] = np.where(better, value[:, a + 1], value[:, a])
        num[:, a] = np.where(better, num[:, a + 1], num[:, a])
        den[:, a] = np.where(better, den[:, a + 1], den[:, a])
    return value, num, den
