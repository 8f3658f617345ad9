"""Agreement between two orderings of the same items."""

from __future__ import annotations

from scipy import stats

from evals.stats._checks import ArrayLike, paired

__all__ = ["kendall_tau"]


def kendall_tau(x: ArrayLike, y: ArrayLike) -> float:
    """Kendall's tau-b of two score vectors (``scipy.stats.kendalltau``); NaN if either is constant."""
    a, b = paired(x, y, ("x", "y"))
    if len(a) < 2:
        return float("nan")
    return float(stats.kendalltau(a, b).statistic)
