"""Calibration fits: loadable by the retriever, equal to sklearn, better calibrated."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from searchtrace.errors import ValidationError
from searchtrace.evals.runs.analysis import band_precision
from searchtrace.evals.runs.calibration import LOGISTIC_C, compact_knots, fit_isotonic, fit_logistic
from searchtrace.evals.runs.runfolder import BandPrecision
from searchtrace.evals.scoring import stats
from searchtrace.names import Band
from searchtrace.retriever.config.model import ConfidenceConfig
from searchtrace.retriever.search.confidence import (
    FEATURES,
    IsotonicRelevance,
    LogisticRelevance,
    SimilarityRelevance,
    band_of,
    bands,
    load_calibration,
)


def synthetic(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Features like the retriever's; relevance depends on dense and keyword, miscalibrated for the ramp."""
    rng = np.random.default_rng(seed)
    x = rng.random((n, len(FEATURES)))
    x[:, FEATURES.index("dense")] = dense = rng.uniform(0.1, 0.9, n)
    x[:, FEATURES.index("rank")] = 1.0 / rng.integers(1, 21, n)
    if "unknown" in FEATURES:
        x[:, FEATURES.index("unknown")] = 0.0
    keyword = x[:, FEATURES.index("keyword")]
    p = 1 / (1 + np.exp(-(12 * (dense - 0.7) + 1.5 * keyword)))  # the ramp says 0.9 at 0.7; truth ~0.5
    return x, (rng.random(n) < p).astype(int)


WIDTH = len(FEATURES)
DENSE = FEATURES.index("dense")


def save(tmp_path, model: dict):
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(model))
    return load_calibration(path)


def test_logistic_round_trip_matches_sklearn(tmp_path):
    x, y = synthetic(2000, 0)
    loaded = save(tmp_path, fit_logistic(x, y))
    assert isinstance(loaded, LogisticRelevance) and loaded.feature_names == FEATURES
    reference = LogisticRegression(C=LOGISTIC_C, max_iter=1000).fit(x, y)
    np.testing.assert_allclose(loaded.predict(x), reference.predict_proba(x)[:, 1], rtol=0, atol=1e-9)


def test_logistic_on_a_feature_subset(tmp_path):
    x, y = synthetic(1000, 1)
    model = fit_logistic(x, y, features=("dense", "keyword"))
    assert model["features"] == ["dense", "keyword"] and len(model["coef"]) == 2
    cols = [FEATURES.index("dense"), FEATURES.index("keyword")]
    reference = LogisticRegression(C=LOGISTIC_C, max_iter=1000).fit(x[:, cols], y)
    np.testing.assert_allclose(save(tmp_path, model).predict(x), reference.predict_proba(x[:, cols])[:, 1], atol=1e-9)


def test_isotonic_round_trip_matches_sklearn(tmp_path):
    x, y = synthetic(600, 2)
    model = fit_isotonic(x, y, max_knots=10_000)
    loaded = save(tmp_path, model)
    assert isinstance(loaded, IsotonicRelevance) and loaded.feature == "dense"
    reference = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(x[:, DENSE], y)
    probe = np.zeros((500, WIDTH))
    probe[:, DENSE] = np.linspace(0, 1, 500)
    np.testing.assert_allclose(loaded.predict(probe), reference.predict(probe[:, DENSE]), rtol=0, atol=1e-9)
    assert np.all(np.diff(model["x"]) > 0)  # deduplicated, ascending


def test_isotonic_is_compacted_and_stays_monotone():
    x, y = synthetic(20_000, 3)
    model = fit_isotonic(x, y)
    assert 2 <= len(model["x"]) <= 100
    assert np.all(np.diff(model["x"]) > 0) and np.all(np.diff(model["y"]) >= 0)


def test_compact_knots_keeps_the_shape():
    xs = np.linspace(0, 1, 1001)
    ys = np.round(xs * 5) / 5  # five steps
    kx, ky = compact_knots(xs, ys, max_knots=100)
    assert len(kx) <= 100
    np.testing.assert_allclose(np.interp(xs, kx, ky), ys, atol=1e-12)
    line_x, line_y = compact_knots(xs, 2 * xs)
    assert line_x.tolist() == [0.0, 1.0] and line_y.tolist() == [0.0, 2.0]


def test_fitted_models_improve_ece_over_the_ramp(tmp_path):
    train_x, train_y = synthetic(5000, 4)
    test_x, test_y = synthetic(5000, 5)
    ramp = stats.expected_calibration_error(SimilarityRelevance().predict(test_x), test_y)
    for model in (fit_logistic(train_x, train_y), fit_isotonic(train_x, train_y)):
        fitted = stats.expected_calibration_error(save(tmp_path, model).predict(test_x), test_y)
        assert fitted < ramp / 2, (model["kind"], fitted, ramp)


def test_band_precision_by_hand():
    relevance = [0.9, 0.7, 0.5, 0.4, 0.1, 0.65]
    labels = [1, 0, 1, 0, 0, 1]
    out, ordered = band_precision(bands(relevance, ConfidenceConfig(high=0.65, low=0.35)), labels)
    assert out[Band.HIGH] == BandPrecision(2 / 3, 3)  # 0.9, 0.7, 0.65 (>= high)
    assert out[Band.MEDIUM] == BandPrecision(1 / 2, 2)  # 0.5, 0.4
    assert out[Band.LOW] == BandPrecision(0.0, 1)
    assert ordered
    empty, _ = band_precision(bands([0.5], ConfidenceConfig(high=0.9, low=0.1)), [1])
    assert empty[Band.HIGH] == BandPrecision(None, 0)


def test_rank_only_relevance_never_reaches_high():
    config = ConfidenceConfig(high=0.65, low=0.35)
    assert band_of(0.9, config) is Band.HIGH and band_of(0.9, config, rank_only=True) is Band.MEDIUM
    assert band_of(0.65, config) is Band.HIGH and band_of(0.6499, config) is Band.MEDIUM
    assert band_of(0.35, config) is Band.MEDIUM and band_of(0.3499, config, rank_only=True) is Band.LOW


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: fit_logistic(np.zeros((4, WIDTH - 1)), [0, 1, 0, 1]), f"n x {WIDTH}"),
        (lambda: fit_logistic(np.zeros((4, WIDTH)), [1, 1, 1, 1]), "both classes"),
        (lambda: fit_logistic(np.zeros((4, WIDTH)), [0, 1, 2, 1]), "0 or 1"),
        (lambda: fit_logistic(np.zeros((4, WIDTH)), [0, 1, 0, 1], features=("bm25",)), "unknown features"),
        (lambda: fit_isotonic(np.zeros((4, WIDTH)), [0, 1, 0, 1], feature="bm25"), "unknown feature"),
        (lambda: ConfidenceConfig(high=0.2, low=0.4), "low <= high"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValidationError, match=message):
        call()
