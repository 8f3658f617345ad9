"""Fuse stage: expected values written as formulas."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.config import FusionConfig
from retriever.stages.fuse import fuse, keyword_then_dense, minmax, rrf, weighted_sum
from retriever.types import Candidates, FusionMethod, Stage


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
