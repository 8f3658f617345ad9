import json

import numpy as np
import pytest

from retriever import confidence as conf
from retriever.config import ConfidenceConfig
from retriever.errors import ValidationError
from retriever.types import Band, Fused, Stage


def fused():
    return Fused(
        np.array(["a", "b", "c"], dtype=object),
        np.array([0.04, 0.02, 0.01]),
        {Stage.DENSE: np.array([0.7, np.nan, 0.3]), Stage.KEYWORD: np.array([np.nan, 8.0, 4.0])},
        {},
    )


def test_features_impute_dense_floor_and_scale():
    x = conf.features(fused(), dense_floor=0.25)
    np.testing.assert_allclose(x[:, 0], [0.7, 0.25, 0.3])
    np.testing.assert_allclose(x[:, 1], [0.0, 1.0, 0.5])
    np.testing.assert_allclose(x[:, 2], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(x[:, 3], [1.0, 0.5, 0.25])
    np.testing.assert_allclose(x[:, 4], [1.0, 1 / 2, 1 / 3])


def test_similarity_ramp():
    m = conf.SimilarityRelevance(lo=0.2, hi=0.7)
    x = np.zeros((3, 5))
    x[:, 0] = [0.1, 0.45, 0.9]
    np.testing.assert_allclose(m.predict(x), [0.0, (0.45 - 0.2) / 0.5, 1.0])


def test_bands_thresholds_and_rank_only_cap():
    cfg = ConfidenceConfig(high=0.65, low=0.35)
    rel = np.array([0.65, 0.64, 0.35, 0.3499])
    assert conf.bands(rel, cfg, False) == [Band.HIGH, Band.MEDIUM, Band.MEDIUM, Band.LOW]
    assert conf.bands(np.array([0.99]), cfg, True) == [Band.MEDIUM]


def test_rank_relevance_never_high():
    x = conf.features(fused(), 0.0)
    rel = conf.RankRelevance().predict(x)
    assert rel.max() == pytest.approx(0.5)


def test_load_logistic(tmp_path):
    p = tmp_path / "cal.json"
    p.write_text(json.dumps({"kind": "logistic", "features": ["dense", "keyword"], "coef": [4.0, 1.0], "intercept": -2.0}))
    m = conf.load_calibration(p)
    x = np.zeros((1, 5))
    x[0, :2] = [0.5, 1.0]
    assert m.predict(x)[0] == pytest.approx(1 / (1 + np.exp(-(-2.0 + 4.0 * 0.5 + 1.0))))


def test_load_isotonic(tmp_path):
    p = tmp_path / "cal.json"
    p.write_text(json.dumps({"kind": "isotonic", "feature": "dense", "x": [0.0, 0.5, 1.0], "y": [0.0, 0.2, 0.9]}))
    x = np.zeros((1, 5))
    x[0, 0] = 0.75
    assert conf.load_calibration(p).predict(x)[0] == pytest.approx(0.55)


@pytest.mark.parametrize("body", ['{"kind": "forest"}', "not json", '{"kind": "logistic", "coef": [1]}',
                                  '{"kind": "isotonic", "feature": "colour", "x": [0], "y": [0]}'])
def test_bad_calibration_names_file(tmp_path, body):
    p = tmp_path / "cal.json"
    p.write_text(body)
    with pytest.raises(ValidationError) as info:
        conf.load_calibration(p)
    assert str(p) in info.value.message
