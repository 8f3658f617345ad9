"""Agreement between two orderings of the same items.

Written in numpy rather than with ``scipy.stats.kendalltau``: importing
``scipy.stats`` takes about 1.6 s, a third of a warm ``searchtrace eval`` whose
report needs only this and average ranks. The tests check it against scipy.
"""

from __future__ import annotations

import numpy as np

from searchtrace.evals.scoring.stats._checks import ArrayLike, paired

__all__ = ["kendall_tau"]


def _dense_codes(values: np.ndarray) -> np.ndarray:
    """Each value's rank among the distinct values (equal values, equal codes)."""
    return np.unique(values, return_inverse=True)[1].ravel()


def _tied_pairs(codes: np.ndarray) -> int:
    counts = np.bincount(codes)
    return int((counts * (counts - 1) // 2).sum())


def _discordant(y: np.ndarray) -> int:
    """Pairs ``i < j`` with ``y[i] > y[j]`` (a Fenwick tree over the codes of ``y``): O(n log n)."""
    tree = [0] * (int(y.max()) + 2)
    count = 0
    for seen, v in enumerate(y.tolist()):
        i, not_above = v + 1, 0
        while i > 0:
            not_above += tree[i]
            i -= i & -i
        count += seen - not_above
        i = v + 1
        while i < len(tree):
            tree[i] += 1
            i += i & -i
    return count


def kendall_tau(x: ArrayLike, y: ArrayLike) -> float:
    """Kendall's tau-b of two score vectors (Knight 1966); NaN if either is constant.

    ``(concordant - discordant) / sqrt((n0 - ties_x) (n0 - ties_y))`` over the
    ``n0 = n (n - 1) / 2`` pairs, as ``scipy.stats.kendalltau`` computes it.
    """
    a, b = paired(x, y, ("x", "y"))
    n = len(a)
    if n < 2:
        return float("nan")
    cx, cy = _dense_codes(a), _dense_codes(b)
    by = np.lexsort((cy, cx))  # by x, ties by y: tied-x pairs are never inversions
    cx, cy = cx[by], cy[by]
    pairs = n * (n - 1) // 2
    ties_x, ties_y = _tied_pairs(cx), _tied_pairs(cy)
    if ties_x == pairs or ties_y == pairs:
        return float("nan")
    joint = _tied_pairs(_dense_codes(cx * (int(cy.max()) + 1) + cy))
    discordant = _discordant(cy)
    concordant_minus_discordant = pairs - ties_x - ties_y + joint - 2 * discordant
    return float(concordant_minus_discordant / np.sqrt(pairs - ties_x) / np.sqrt(pairs - ties_y))
