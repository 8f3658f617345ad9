"""How well predicted relevance matches outcomes: ECE, Brier, AUROC, risk-coverage."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from searchtrace.errors import ValidationError
from searchtrace.evals.scoring.stats._checks import ArrayLike, binary, vector

__all__ = ["RiskCoverage", "auroc", "brier_score", "expected_calibration_error", "risk_coverage"]


def _pair(probabilities: ArrayLike, labels: ArrayLike, unit: bool) -> tuple[np.ndarray, np.ndarray]:
    p = vector(probabilities, "probabilities", unit=unit)
    y = binary(labels, "labels")
    if len(p) != len(y):
        raise ValidationError(f"probabilities and labels differ in length: {len(p)} != {len(y)}", field="labels")
    if len(p) == 0:
        raise ValidationError("need at least one prediction", field="labels")
    return p, y


def expected_calibration_error(probabilities: ArrayLike, labels: ArrayLike, n_bins: int = 10) -> float:
    """ECE with ``n_bins`` equal-width bins on [0, 1] (Naeini et al., 2015).

    ``sum_b n_b / n * |mean(label in b) - mean(probability in b)|``; bin ``i``
    holds ``[i / n_bins, (i + 1) / n_bins)``, the last also holds 1.0.
    """
    p, y = _pair(probabilities, labels, unit=True)
    bins = np.minimum((p * n_bins).astype(np.int64), n_bins - 1)
    counts = np.bincount(bins, minlength=n_bins)
    gap = np.abs(np.bincount(bins, weights=y, minlength=n_bins) - np.bincount(bins, weights=p, minlength=n_bins))
    # |sum(y) - sum(p)| / n per bin equals n_b / n * |acc_b - conf_b|.
    return float(gap[counts > 0].sum() / len(p))


def brier_score(probabilities: ArrayLike, labels: ArrayLike) -> float:
    """Mean squared difference between probability and 0/1 label (Brier, 1950)."""
    p, y = _pair(probabilities, labels, unit=True)
    return float(np.mean((p - y) ** 2))


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, tied values sharing their mean rank (``scipy.stats.rankdata``'s default)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], len(values)]  # each tie group is ordered[start:end]
    ranks = np.empty(len(values))
    ranks[order] = np.repeat((starts + ends + 1) / 2, ends - starts)
    return ranks


def auroc(scores: ArrayLike, labels: ArrayLike) -> float:
    """Area under the ROC curve as the Mann-Whitney U statistic over n+ * n-.

    Tied scores get average ranks (a tie counts one half). NaN when only one
    class is present.
    """
    s, y = _pair(scores, labels, unit=False)
    positives = int(y.sum())
    negatives = len(y) - positives
    if positives == 0 or negatives == 0:
        return float("nan")
    ranks = average_ranks(s)
    u = ranks[y == 1].sum() - positives * (positives + 1) / 2
    return float(u / (positives * negatives))


@dataclass(frozen=True, eq=False)
class RiskCoverage:
    """Selective-prediction curve: answer only above a confidence threshold.

    Attributes:
        thresholds: distinct confidences, descending.
        coverage: share of items with confidence >= each threshold.
        risk: error rate (1 - accuracy) among those items.
        aurc: area under the curve, ``sum risk * delta coverage`` (lower is better).
    """

    thresholds: np.ndarray
    coverage: np.ndarray
    risk: np.ndarray
    aurc: float


def risk_coverage(confidence: ArrayLike, correct: ArrayLike) -> RiskCoverage:
    """Risk at every coverage reachable by thresholding ``confidence`` (Geifman & El-Yaniv, 2017)."""
    c, y = _pair(confidence, correct, unit=False)
    order = np.argsort(-c, kind="stable")
    c, y = c[order], y[order]
    last = np.r_[np.flatnonzero(c[1:] != c[:-1]), len(c) - 1]  # end of each tie block
    taken = last + 1
    coverage = taken / len(c)
    risk = 1.0 - np.cumsum(y)[last] / taken
    aurc = float(np.sum(risk * np.diff(np.r_[0.0, coverage])))
    return RiskCoverage(c[last], coverage, risk, aurc)
