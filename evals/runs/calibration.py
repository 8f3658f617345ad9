"""Calibration: fit the relevance model the retriever loads with ``load_calibration``, and ``searchtrace calibrate``.

:func:`fit_logistic` and :func:`fit_isotonic` take the per-candidate feature
matrix of :func:`searchtrace.retriever.search.confidence.features` (one column per
:class:`~searchtrace.retriever.Feature`, in its order) and 0/1 relevance labels,
and return the JSON-ready dicts ``load_calibration`` reads::

    {"kind": "logistic", "features": [...], "coef": [...], "intercept": b}
    {"kind": "isotonic", "feature": "dense", "x": [...], "y": [...]}

:func:`calibrate` fits on one run folder's results, writes the file
``ConfidenceConfig(calibration_path=...)`` loads, and reports ECE, Brier and
band precision of the run's own relevance (before) and of the fitted model's
(after), on the evaluation run's results, which should come from a different
split than the one fitted on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from searchtrace.durable import write_atomic
from searchtrace.errors import DataError, ValidationError
from searchtrace.evals.runs import analysis
from searchtrace.evals.runs.runfolder import RunFolder, feature_column
from searchtrace.evals.scoring import stats
from searchtrace.retriever import FEATURES, ConfidenceConfig, Feature, bands, load_calibration

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LOGISTIC_C", "MAX_KNOTS", "calibrate", "compact_knots", "fit_isotonic", "fit_logistic"]

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


def _xy(folder: RunFolder, table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    columns = [feature_column(f) for f in FEATURES]
    external = folder.summary().external
    if external is not None and (table.empty or any(c not in table or table[c].isna().any() for c in columns)):
        raise ValidationError(f"{folder.path} is an external run ({external.kind} {external.source}): it has no "
                              "relevance features to calibrate; calibrate a run of this project's retriever",
                              field="run")
    missing = [c for c in columns if c not in table]
    if missing:
        raise DataError(str(folder.results_file), None, f"no feature column {', '.join(missing)}; "
                                                         "was the run made by an older searchtrace?")
    return table[columns].to_numpy(np.float64), table["label"].to_numpy(np.int64)


def _quality(relevance: np.ndarray, labels: np.ndarray, thresholds: ConfidenceConfig) -> dict[str, Any]:
    precision, ordered = analysis.band_precision(bands(relevance, thresholds), labels.tolist())
    return {"ece": stats.expected_calibration_error(relevance, labels), "brier": stats.brier_score(relevance, labels),
            "band_precision": {b.value: {"precision": p.precision, "count": p.count} for b, p in precision.items()}
                              | {"ordered": ordered}}


def calibrate(run: Path, out: Path, *, method: str = "logistic", eval_run: Path | None = None,
              thresholds: ConfidenceConfig | None = None) -> dict[str, Any]:
    """Fit on ``run``'s results, write ``out``, and report on ``eval_run`` (default: ``run``)."""
    thresholds = thresholds or ConfidenceConfig()
    fitted_on = RunFolder.completed(run)
    fit_table = fitted_on.results()
    x, y = _xy(fitted_on, fit_table)
    model = fit_logistic(x, y) if method == "logistic" else fit_isotonic(x, y, feature=Feature.DENSE.value)
    payload = json.dumps(model, indent=2).encode("utf-8")
    write_atomic(out, lambda tmp: tmp.write_bytes(payload))  # a crash leaves the old file, never half a model
    target = RunFolder.completed(eval_run) if eval_run is not None else fitted_on
    table = target.results()
    ex, ey = _xy(target, table)
    fitted = load_calibration(out).predict(ex)
    return {
        "method": method,
        "file": str(out),
        "fitted_on": {"run": fitted_on.run_id, "split": fitted_on.summary().dataset.split, "results": len(fit_table)},
        "evaluated_on": f"{target.run_id} ({target.summary().dataset.split})",
        "held_out": target != fitted_on,
        "before": _quality(table["relevance"].to_numpy(np.float64), ey, thresholds),
        "after": _quality(fitted, ey, thresholds),
    }
