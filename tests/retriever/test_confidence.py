import json

import numpy as np
import pytest

from searchtrace.errors import ValidationError
from searchtrace.names import Band, Stage
from searchtrace.retriever.config.model import ConfidenceConfig
from searchtrace.retriever.search import confidence as conf
from searchtrace.retriever.types import Fused


def fused():
    return Fused(
        np.array(["a", "b", "c"], dtype=object),
        np.array([0.04, 0.02, 0.01]),
        {Stage.DENSE: np.array([0.7, np.nan, 0.3]), Stage.KEYWORD: np.array([np.nan, 8.0, 4.0])},
        {},
    )


def test_features_impute_dense_floor_and_scale():
    x = conf.features(fused(), conf.QueryEvidence(dense_floor=0.25, keyword_max=16.0, unknown_share=0.5))
    assert x.shape == (3, len(conf.FEATURES))
    np.testing.assert_allclose(x[:, 0], [0.7, 0.25, 0.3])
    np.testing.assert_allclose(x[:, 5], [0.0, 8.0 / 16.0, 4.0 / 16.0])
    np.testing.assert_allclose(x[:, 6], [0.5, 0.5, 0.5])
    np.testing.assert_allclose(x[:, 1], [0.0, 1.0, 0.5])
    np.testing.assert_allclose(x[:, 2], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(x[:, 3], [1.0, 0.5, 0.25])
    np.testing.assert_allclose(x[:, 4], [1.0, 1 / 2, 1 / 3])


def test_similarity_ramp_discounted_by_unknown_names():
    m = conf.SimilarityRelevance(lo=0.2, hi=0.7)
    x = np.zeros((3, len(conf.FEATURES)))
    x[:, 0] = [0.1, 0.45, 0.9]
    np.testing.assert_allclose(m.predict(x), [0.0, (0.45 - 0.2) / 0.5, 1.0])
    x[:, 6] = 0.25
    np.testing.assert_allclose(m.predict(x), [0.0, (0.45 - 0.2) / 0.5 * 0.75, 0.75])


def test_bands_thresholds_and_rank_only_cap():
    cfg = ConfidenceConfig(high=0.65, low=0.35)
    rel = np.array([0.65, 0.64, 0.35, 0.3499])
    assert conf.bands(rel, cfg, False) == [Band.HIGH, Band.MEDIUM, Band.MEDIUM, Band.LOW]
    assert conf.bands(np.array([0.99]), cfg, True) == [Band.MEDIUM]


def test_rank_relevance_never_high():
    x = conf.features(fused(), conf.QueryEvidence())
    rel = conf.RankRelevance().predict(x)
    assert rel.max() == pytest.approx(0.5)


def test_load_logistic(tmp_path):
    p = tmp_path / "cal.json"
    p.write_text(json.dumps({"kind": "logistic", "features": ["dense", "keyword"], "coef": [4.0, 1.0], "intercept": -2.0}))
    m = conf.load_calibration(p)
    x = np.zeros((1, len(conf.FEATURES)))
    x[0, :2] = [0.5, 1.0]
    assert m.predict(x)[0] == pytest.approx(1 / (1 + np.exp(-(-2.0 + 4.0 * 0.5 + 1.0))))


def test_load_isotonic(tmp_path):
    p = tmp_path / "cal.json"
    p.write_text(json.dumps({"kind": "isotonic", "feature": "dense", "x": [0.0, 0.5, 1.0], "y": [0.0, 0.2, 0.9]}))
    x = np.zeros((1, len(conf.FEATURES)))
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


def test_name_words_and_unknown_name_share():
    from searchtrace.retriever.stages.keyword import name_words, unknown_name_share
    from searchtrace.retriever.vectorstore.bm25 import Bm25Encoder
    from searchtrace.retriever.vectorstore.term_stats import TermStats

    assert name_words("Who painted the Zorvath frescoes in Quendril?") == ["Zorvath", "Quendril"]
    assert name_words("What does HX-47 cost in 1620?") == ["HX-47", "1620"]
    bm25 = Bm25Encoder(10.0)
    known = bm25.encode_query("Quendril")
    stats = TermStats(3, {t: 1 for t in known.indices})
    share = unknown_name_share("Who painted the Zorvath frescoes in Quendril?", bm25, stats)
    zorvath = bm25.encode_query("Zorvath").indices[0]
    assert share == pytest.approx(stats.idf(zorvath) / (stats.idf(zorvath) + stats.idf(known.indices[0])))
    assert unknown_name_share("what frescoes", bm25, stats) == 0.0
