"""Agreement between judges: Cohen's kappa, Fleiss' kappa, Krippendorff's alpha.

Each takes the labels as arrays and returns a float (NaN when agreement is
undefined: one category throughout, or fewer than two pairable labels). The
tests check them against ``statsmodels.stats.inter_rater`` and the
``krippendorff`` package.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

import numpy as np

from searchtrace.errors import ValidationError
from searchtrace.evals.scoring.stats._checks import ArrayLike, paired

__all__ = ["Level", "cohen_kappa", "fleiss_kappa", "krippendorff_alpha"]


def _chance_corrected(observed: float, expected: float) -> float:
    """``(p_o - p_e) / (1 - p_e)``; NaN when chance alone agrees fully."""
    return float("nan") if expected >= 1.0 else (observed - expected) / (1.0 - expected)


def cohen_kappa(a: ArrayLike, b: ArrayLike) -> float:
    """Cohen's (1960) kappa of two judges' labels of the same items, unweighted.

    ``(p_o - p_e) / (1 - p_e)``: ``p_o`` the share of items both label alike,
    ``p_e`` the agreement expected from each judge's own label frequencies.
    """
    x, y = paired(a, b, ("a", "b"))
    if len(x) == 0:
        return float("nan")
    categories, codes = np.unique(np.r_[x, y], return_inverse=True)
    table = np.zeros((len(categories), len(categories)))
    np.add.at(table, (codes[: len(x)], codes[len(x):]), 1)
    table /= len(x)
    return _chance_corrected(float(np.trace(table)), float(table.sum(1) @ table.sum(0)))


def fleiss_kappa(counts: ArrayLike | list[list[int]]) -> float:
    """Fleiss' (1971) kappa from an items x categories table of how many judges gave each.

    Per item ``P_i = sum_j n_ij (n_ij - 1) / (n_i (n_i - 1))``; ``P_e = sum_j p_j^2``
    with ``p_j`` category ``j``'s share of all labels. An item may have any
    number of judges >= 2 (``n_i``); with the same number for every item this
    is Fleiss' formula exactly.
    """
    table = np.asarray(counts, dtype=np.float64)
    if table.ndim != 2 or np.any(table < 0) or not np.all(np.isfinite(table)):
        raise ValidationError("counts must be an items x categories table of non-negative counts", field="counts")
    raters = table.sum(1)
    if len(table) == 0 or np.any(raters < 2):
        raise ValidationError("every item needs at least two labels", field="counts")
    per_item = (table * (table - 1)).sum(1) / (raters * (raters - 1))
    shares = table.sum(0) / raters.sum()
    return _chance_corrected(float(per_item.mean()), float(shares @ shares))


class Level(str, enum.Enum):
    """Krippendorff's levels of measurement this module knows."""

    NOMINAL = "nominal"
    ORDINAL = "ordinal"
    INTERVAL = "interval"


def _nominal(values: np.ndarray, totals: np.ndarray) -> np.ndarray:
    return 1.0 - np.eye(len(values))


def _ordinal(values: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """``(sum_{g=c..k} n_g - (n_c + n_k) / 2)^2`` (Krippendorff 2011, the ordinal metric)."""
    below = np.cumsum(totals) - totals  # labels of lower values
    low = np.minimum.outer(np.arange(len(values)), np.arange(len(values)))
    high = np.maximum.outer(np.arange(len(values)), np.arange(len(values)))
    between = below[high] + totals[high] - below[low]
    return (between - np.add.outer(totals, totals) / 2) ** 2


def _interval(values: np.ndarray, totals: np.ndarray) -> np.ndarray:
    return np.subtract.outer(values, values) ** 2


_METRICS: dict[Level, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    Level.NOMINAL: _nominal, Level.ORDINAL: _ordinal, Level.INTERVAL: _interval}


def _coincidences(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values and their coincidence matrix ``o_ck`` over the units with two labels or more."""
    present = ~np.isnan(data)
    values, codes = np.unique(data[present], return_inverse=True)
    counts = np.zeros((data.shape[1], len(values)))
    np.add.at(counts, (np.nonzero(present)[1], codes.ravel()), 1)
    labels = counts.sum(1)
    counts, labels = counts[labels >= 2], labels[labels >= 2]
    weighted = counts / (labels - 1)[:, None]
    return values, weighted.T @ counts - np.diag(weighted.sum(0))


def krippendorff_alpha(data: ArrayLike | list[list[float]], level: Level | str = Level.ORDINAL) -> float:
    """Krippendorff's alpha of a judges x items matrix, NaN where a judge gave no label.

    ``1 - D_o / D_e`` from the coincidence matrix (Krippendorff 2011,
    "Computing Krippendorff's alpha-reliability"); items with fewer than two
    labels do not count.
    """
    matrix = np.asarray(data, dtype=np.float64)
    if matrix.ndim != 2 or np.any(np.isinf(matrix)):
        raise ValidationError("data must be a judges x items matrix of numbers (NaN: no label)", field="data")
    try:
        metric = _METRICS[Level(level)]
    except ValueError:
        raise ValidationError(f"unknown level {level!r}; expected one of {', '.join(m.value for m in Level)}",
                              field="level") from None
    values, o = _coincidences(matrix)
    totals = o.sum(1)
    n = totals.sum()
    distance = metric(values, totals)
    expected = float((np.outer(totals, totals) * distance).sum())
    if n < 2 or expected == 0:
        return float("nan")
    return float(1.0 - (n - 1) * (o * distance).sum() / expected)
