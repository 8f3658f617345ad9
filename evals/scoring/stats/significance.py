"""Paired significance tests over per-query scores, and Holm's correction.

Every test compares a candidate ``b`` to a baseline ``a`` query by query
(``d = b - a``). Resampling is seeded and vectorised: resamples are drawn as
(block x n) matrices, blocks bounded to keep memory flat for large ``n``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from searchtrace.evals.scoring.stats._checks import ArrayLike, paired, resamples, vector

__all__ = ["ConfidenceInterval", "holm", "paired_bootstrap_ci", "paired_t_test", "randomization_test"]

_BLOCK_CELLS = 1 << 22  # at most ~4M resampled values in memory at once


@dataclass(frozen=True)
class ConfidenceInterval:
    """A two-sided interval of the mean difference at ``level``."""

    low: float
    high: float
    level: float


def _blocks(n_resamples: int, n: int) -> Iterator[int]:
    rows = max(1, _BLOCK_CELLS // max(n, 1))
    for start in range(0, n_resamples, rows):
        yield min(rows, n_resamples - start)


def paired_bootstrap_ci(
    a: ArrayLike, b: ArrayLike, *, level: float = 0.95, n_resamples: int = 10_000, seed: int = 0
) -> ConfidenceInterval:
    """Percentile bootstrap interval of ``mean(b - a)`` (Efron & Tibshirani, 1993).

    Queries are resampled with replacement as pairs. An empty input gives NaN bounds.
    """
    x, y = paired(a, b)
    n_resamples = resamples(n_resamples)
    diff = y - x
    if len(diff) == 0:
        return ConfidenceInterval(float("nan"), float("nan"), level)
    rng = np.random.default_rng(seed)
    n = len(diff)
    means = np.concatenate(
        [diff[rng.integers(0, n, size=(rows, n))].mean(axis=1) for rows in _blocks(n_resamples, n)]
    )
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return ConfidenceInterval(float(low), float(high), level)


def paired_t_test(a: ArrayLike, b: ArrayLike) -> float:
    """Two-sided p-value of Student's paired t-test (``scipy.stats.ttest_rel``).

    Defined as 1.0 when every difference is 0 and 0.0 when all differences
    are equal but not 0 (zero variance); NaN with fewer than two pairs.
    """
    x, y = paired(a, b)
    diff = y - x
    if len(diff) < 2:
        return float("nan")
    if np.all(diff == diff[0]):
        return 1.0 if diff[0] == 0 else 0.0
    from scipy import stats  # imported here: scipy.stats takes about 1.6 s to import

    return float(stats.ttest_rel(y, x).pvalue)


def randomization_test(a: ArrayLike, b: ArrayLike, *, n_resamples: int = 10_000, seed: int = 0) -> float:
    """Two-sided paired randomization (sign-flip) test of ``mean(b - a)`` (Smucker et al., 2007).

    ``p = (#{|mean of sign-flipped d| >= |mean d|} + 1) / (n_resamples + 1)``;
    1.0 for empty input.
    """
    x, y = paired(a, b)
    n_resamples = resamples(n_resamples)
    diff = y - x
    if len(diff) == 0:
        return 1.0
    observed = abs(diff.mean())
    rng = np.random.default_rng(seed)
    hits = 0
    for rows in _blocks(n_resamples, len(diff)):
        signs = rng.integers(0, 2, size=(rows, len(diff)), dtype=np.int8) * 2 - 1
        # A flip that reproduces |observed| may differ from it by rounding only.
        hits += int(np.count_nonzero(np.abs((signs @ diff) / len(diff)) >= observed - 1e-12))
    return (hits + 1) / (n_resamples + 1)


def holm(p_values: ArrayLike) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (Holm, 1979), in input order.

    ``p_(i) * (m - i + 1)`` over the ascending p-values, made monotone and
    capped at 1. NaN entries stay NaN and do not count towards ``m``.
    """
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    if len(valid) == 0:
        return out
    vector(p[valid], "p_values", unit=True)
    order = valid[np.argsort(p[valid], kind="stable")]
    m = len(order)
    scaled = p[order] * (m - np.arange(m))
    out[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
    return out
