"""Fuse stage: expected values written as formulas."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchtrace.errors import ValidationError
from searchtrace.names import Stage
from searchtrace.retriever.config.model import FusionConfig
from searchtrace.retriever.stages.fuse import dbsf, fuse, keyword_then_dense, minmax, rrf, weighted_sum, zscore
from searchtrace.retriever.types import Candidates, FusionMethod


def cands(stage, pairs):
    return Candidates.from_pairs(stage, pairs)


DENSE = cands(Stage.DENSE, [("a", 0.9), ("b", 0.8), ("c", 0.1)])
KEYWORD = cands(Stage.KEYWORD, [("c", 12.0), ("a", 7.0), ("d", 3.0)])
WEIGHTS = {Stage.DENSE: 1.0, Stage.KEYWORD: 1.0, Stage.GRAPH: 1.0}


def test_rrf_scores_are_sum_of_reciprocal_ranks():
    fused = rrf([DENSE, KEYWORD], 60, WEIGHTS)
    got = dict(zip(fused.ids, fused.scores))
    assert got["a"] == pytest.approx(1 / (60 + 1) + 1 / (60 + 2))
    assert got["c"] == pytest.approx(1 / (60 + 3) + 1 / (60 + 1))
    assert got["b"] == pytest.approx(1 / (60 + 2))
    assert got["d"] == pytest.approx(1 / (60 + 3))
    assert list(fused.ids) == ["a", "c", "b", "d"]


def test_rrf_weights_and_k0():
    fused = rrf([DENSE, KEYWORD], 10, {Stage.DENSE: 2.0, Stage.KEYWORD: 0.5})
    got = dict(zip(fused.ids, fused.scores))
    assert got["a"] == pytest.approx(2.0 / (10 + 1) + 0.5 / (10 + 2))
    assert got["d"] == pytest.approx(0.5 / (10 + 3))


def test_components_and_ranks_recorded():
    fused = rrf([DENSE, KEYWORD], 60, WEIGHTS)
    row = list(fused.ids).index("d")
    assert np.isnan(fused.components[Stage.DENSE][row])
    assert fused.components[Stage.KEYWORD][row] == 3.0
    assert fused.ranks[Stage.KEYWORD][row] == 3
    assert fused.ranks[Stage.DENSE][row] == 0


def test_ties_broken_by_id():
    a = cands(Stage.DENSE, [("y", 1.0)])
    b = cands(Stage.KEYWORD, [("x", 1.0)])
    assert list(rrf([a, b], 60, WEIGHTS).ids) == ["x", "y"]


def test_minmax():
    assert minmax(np.array([2.0, 4.0, 3.0])).tolist() == [0.0, 1.0, 0.5]
    assert minmax(np.array([5.0, 5.0])).tolist() == [1.0, 1.0]


def test_weighted_sum_of_normalized_scores():
    fused = weighted_sum([DENSE, KEYWORD], {Stage.DENSE: 1.0, Stage.KEYWORD: 2.0})
    got = dict(zip(fused.ids, fused.scores))
    assert got["a"] == pytest.approx(1.0 * (0.9 - 0.1) / 0.8 + 2.0 * (7 - 3) / 9)
    assert got["c"] == pytest.approx(0.0 + 2.0 * 1.0)
    assert got["d"] == pytest.approx(0.0)


def test_dbsf_maps_mean_plus_minus_three_sigma_to_zero_and_one():
    x = np.array([0.9, 0.8, 0.1])
    mu, sigma = x.mean(), x.std()
    np.testing.assert_allclose(dbsf(x), (x - (mu - 3 * sigma)) / (6 * sigma))
    assert dbsf(np.array([2.0, 2.0])).tolist() == [1.0, 1.0]
    assert len(dbsf(np.empty(0))) == 0


def test_zscore():
    x = np.array([12.0, 7.0, 3.0])
    np.testing.assert_allclose(zscore(x), (x - x.mean()) / x.std())
    assert zscore(np.array([4.0])).tolist() == [1.0]


def test_dbsf_fusion_sums_weighted_normalized_scores():
    fused = fuse([DENSE, KEYWORD], FusionConfig(method=FusionMethod.DBSF,
                                                weights={Stage.DENSE: 1.0, Stage.KEYWORD: 0.5}))
    got = dict(zip(fused.ids, fused.scores))
    d, k = np.array([0.9, 0.8, 0.1]), np.array([12.0, 7.0, 3.0])
    nd = (d - (d.mean() - 3 * d.std())) / (6 * d.std())
    nk = (k - (k.mean() - 3 * k.std())) / (6 * k.std())
    assert got["a"] == pytest.approx(nd[0] + 0.5 * nk[1])
    assert got["b"] == pytest.approx(nd[1])
    assert got["c"] == pytest.approx(nd[2] + 0.5 * nk[0])
    assert got["d"] == pytest.approx(0.5 * nk[2])
    assert list(fused.ids) == ["a", "c", "b", "d"]


def test_default_fusion_is_dbsf_with_equal_weights():
    cfg = FusionConfig()
    assert cfg.method is FusionMethod.DBSF
    assert [cfg.weight(s) for s in (Stage.DENSE, Stage.KEYWORD, Stage.GRAPH)] == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("kwargs, needle", [
    ({"k0": 0}, "k0"),
    ({"weights": {Stage.DENSE: -1.0}}, "dense"),
    ({"weights": {Stage.DENSE: float("nan")}}, "dense"),
    ({"weights": {Stage.FUSE: 1.0}}, "allowed stages"),
    ({"weights": {Stage.DENSE: 0.0, Stage.KEYWORD: 0.0}}, "both be 0"),
    ({"method": FusionMethod.KEYWORD_THEN_DENSE, "weights": {Stage.KEYWORD: 0.0}}, "keyword weight"),
])
def test_fusion_config_rejects_bad_values(kwargs, needle):
    with pytest.raises(ValidationError, match=needle):
        FusionConfig(**kwargs)


def test_zero_weight_means_disabled():
    cfg = FusionConfig(weights={Stage.DENSE: 0.0})
    assert not cfg.enabled(Stage.DENSE) and cfg.enabled(Stage.KEYWORD) and cfg.enabled(Stage.GRAPH)


def test_keyword_then_dense_reorders_keyword_candidates_only():
    fused = keyword_then_dense([DENSE, KEYWORD], {"a": 0.9, "c": 0.1, "d": 0.5, "b": 0.8})
    assert list(fused.ids) == ["a", "d", "c"]


def test_fuse_dispatches_on_method():
    cfg = FusionConfig(method=FusionMethod.WEIGHTED)
    assert list(fuse([DENSE, KEYWORD], cfg).ids) == list(weighted_sum([DENSE, KEYWORD], WEIGHTS).ids)


def test_empty_inputs():
    assert len(rrf([Candidates.empty(Stage.DENSE)], 60, WEIGHTS)) == 0
    assert len(rrf([], 60, WEIGHTS)) == 0


ranked = st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=10)


@settings(max_examples=200, deadline=None)
@given(ranked, ranked, ranked, st.permutations([0, 1, 2]))
def test_rrf_independent_of_input_order(d, k, g, perm):
    lists = [
        cands(Stage.DENSE, [(x, 1.0 - i / 10) for i, x in enumerate(d)]),
        cands(Stage.KEYWORD, [(x, 10.0 - i) for i, x in enumerate(k)]),
        cands(Stage.GRAPH, [(x, 5.0 - i) for i, x in enumerate(g)]),
    ]
    base = rrf(lists, 60, WEIGHTS)
    other = rrf([lists[i] for i in perm], 60, WEIGHTS)
    assert list(base.ids) == list(other.ids)
    np.testing.assert_allclose(base.scores, other.scores)
    assert np.all(np.diff(base.scores) <= 1e-15)


@settings(max_examples=100, deadline=None)
@given(ranked, ranked, ranked, st.permutations([0, 1, 2]), st.sampled_from([FusionMethod.DBSF, FusionMethod.ZSCORE,
                                                                          FusionMethod.WEIGHTED]))
def test_score_fusion_independent_of_input_order(d, k, g, perm, method):
    lists = [
        cands(Stage.DENSE, [(x, 1.0 - i / 10) for i, x in enumerate(d)]),
        cands(Stage.KEYWORD, [(x, 10.0 - i) for i, x in enumerate(k)]),
        cands(Stage.GRAPH, [(x, 5.0 - i) for i, x in enumerate(g)]),
    ]
    cfg = FusionConfig(method=method)
    base = fuse(lists, cfg)
    other = fuse([lists[i] for i in perm], cfg)
    assert list(base.ids) == list(other.ids)
    np.testing.assert_allclose(base.scores, other.scores)


def test_weighted_sum_ties_survive_any_input_order():
    """Regression: float sums in input order made equal fused scores unequal and the tie-break flip."""
    d = list("abcdefghij")
    k = ["a", "b", "c", "d", "e", "g", "i", "f", "h", "j"]
    g = ["a", "b", "c", "d", "h", "e", "g", "f", "i", "j"]
    lists = [
        cands(Stage.DENSE, [(x, 1.0 - i / 10) for i, x in enumerate(d)]),
        cands(Stage.KEYWORD, [(x, 10.0 - i) for i, x in enumerate(k)]),
        cands(Stage.GRAPH, [(x, 5.0 - i) for i, x in enumerate(g)]),
    ]
    cfg = FusionConfig(method=FusionMethod.WEIGHTED)
    assert list(fuse(lists, cfg).ids) == list(fuse([lists[0], lists[2], lists[1]], cfg).ids)


SCORE = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0, 3.0])  # few values: ties within and across lists
RANKED = st.lists(st.tuples(st.sampled_from("abcdefghij"), SCORE), max_size=10, unique_by=lambda p: p[0])


@settings(max_examples=300, deadline=None)
@given(RANKED, RANKED, st.sampled_from([FusionMethod.DBSF, FusionMethod.RRF, FusionMethod.ZSCORE,
                                        FusionMethod.WEIGHTED]), st.integers(1, 12))
def test_best_ids_are_the_head_of_the_fused_list(dense, keyword, method, n):
    from searchtrace.retriever.stages.fuse import best_ids

    lists = [cands(Stage.KEYWORD, sorted(keyword, key=lambda p: -p[1])),
             cands(Stage.DENSE, sorted(dense, key=lambda p: -p[1]))]
    config = FusionConfig(method=method, weights={Stage.DENSE: 0.7, Stage.KEYWORD: 1.3, Stage.GRAPH: 1.0})
    assert best_ids(lists, config, n) == fuse(lists, config).ids[:n].tolist()


def test_best_ids_refuse_keyword_then_dense():
    from searchtrace.retriever.stages.fuse import best_ids

    with pytest.raises(ValueError, match="keyword_then_dense"):
        best_ids([DENSE], FusionConfig(method=FusionMethod.KEYWORD_THEN_DENSE), 1)
