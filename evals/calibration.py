"""Fit the relevance model the retriever loads with ``load_calibration``.

Inputs are the per-candidate feature matrix of :func:`searchtrace.retriever.search.confidence.features`
(one column per :class:`~searchtrace.retriever.Feature`, in its order)
and 0/1 relevance labels. The outputs are the JSON-ready dicts ``load_calibration`` reads::

    {"kind": "logistic", "features": [...], "coef": [...], "intercept": b}
    {"kind": "isotonic", "feature": "dense", "x": [...], "y": [...]}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from searchtrace.errors import ValidationError
from searchtrace.retriever import FEATURES, Feature

__all__ = ["LOGISTIC_C", "MAX_KNOTS", "compact_knots", "fit_isotonic", "fit_logistic"]

LOGISTIC_C = 1.0  # inverse L2 strength of sklearn's LogisticRegression (its default)
MAX_KNOTS = 100


def _check(x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != len(FEATURES):
        raise ValidationError(f"features must be an n x {len(FEATURES)} matrix {FEATURES}, got {x.shape}", field="X")
    if len(y) != len(x):
        raise ValidationError(f"{len(x)} feature rows but {len(y)} labels", field="y")
    if not np.all(np.isfinite(x)):
        raise ValidationError("features must be finite", field="X")
    if not np.all((y == 0) | (y == 1)):
        raise ValidationError("labels must be 0 or 1", field="y")
    if len(np.unique(y)) < 2:
        raise ValidationError("labels need both classes (0 and 1) to fit a model", field="y")
    return x, y


def fit_logistic(x: ArrayLike, y: ArrayLike, features: Sequence[str] = FEATURES) -> dict[str, Any]:
    """Logistic regression of the labels on ``features`` (L2, ``C = LOGISTIC_C``, lbfgs).

    Raises:
        ValidationError: malformed inputs, a single class, or an unknown feature.
    """
    x, y = _check(x, y)
    unknown = [f for f in features if f not in FEATURES]
    if unknown or not features:
        raise ValidationError(f"unknown features {unknown}; allowed: {FEATURES}", field="features")
    cols = [Feature(f).column for f in features]
    model = LogisticRegression(C=LOGISTIC_C, max_iter=1000).fit(x[:, cols], y.astype(int))
    return {
        "kind": "logistic",
        "features": list(features),
        "coef": model.coef_[0].tolist(),
        "intercept": float(model.intercept_[0]),
    }


def compact_knots(
    x: np.ndarray, y: np.ndarray, max_knots: int = MAX_KNOTS, tol: float = 1e-12
) -> tuple[np.ndarray, np.ndarray]:
    """At most ``max_knots`` of the points of a piecewise-linear curve (Ramer-Douglas-Peucker).

    Starts from the end points and repeatedly adds the knot whose value the
    current interpolation misses most, until ``max_knots`` or every miss is
    below ``tol``. Collinear and plateau-interior knots are dropped; a subset
    of a monotone curve's knots interpolates monotonically.
    """
    if len(x) <= 2:
        return x, y
    keep = np.zeros(len(x), dtype=bool)
    keep[[0, -1]] = True
    while keep.sum() < max_knots:
        miss = np.abs(np.interp(x, x[keep], y[keep]) - y)
        worst = int(np.argmax(miss))
        if miss[worst] <= tol:
            break
        keep[worst] = True
    return x[keep], y[keep]


def fit_isotonic(x: ArrayLike, y: ArrayLike, feature: str = "dense", max_knots: int = MAX_KNOTS) -> dict[str, Any]:
    """Isotonic (increasing) regression of the labels on one feature, clipped outside the data.

    Knots are sklearn's thresholds (unique ``x``), compacted by
    :func:`compact_knots` to at most ``max_knots``.

    Raises:
        ValidationError: malformed inputs, a single class, or an unknown feature.
    """
    x, y = _check(x, y)
    if feature not in FEATURES:
        raise ValidationError(f"unknown feature {feature!r}; allowed: {FEATURES}", field="feature")
    model = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
    model.fit(x[:, Feature(feature).column], y)
    knots_x, knots_y = compact_knots(np.asarray(model.X_thresholds_), np.asarray(model.y_thresholds_), max_knots)
    return {"kind": "isotonic", "feature": feature, "x": knots_x.tolist(), "y": knots_y.tolist()}
