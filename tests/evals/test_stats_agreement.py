"""Agreement statistics: hand-computed values, and seeded random labels against statsmodels and krippendorff."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from statsmodels.stats import inter_rater

from searchtrace.errors import ValidationError
from searchtrace.evals.scoring.stats import cohen_kappa, fleiss_kappa, krippendorff_alpha

SEEDS = range(8)


def _labels(rng: np.random.Generator, n: int, agree: float) -> tuple[np.ndarray, np.ndarray]:
    """Two judges on a 0-2 scale: the second copies the first with probability ``agree``."""
    a = rng.integers(0, 3, n)
    return a, np.where(rng.random(n) < agree, a, rng.integers(0, 3, n))


def test_cohen_kappa_by_its_formula():
    # a: 0 0 1 1 ; b: 0 1 1 1 -> p_o = 3/4, p_e = (2/4)(1/4) + (2/4)(3/4) = 1/2
    assert cohen_kappa([0, 0, 1, 1], [0, 1, 1, 1]) == pytest.approx((3 / 4 - 1 / 2) / (1 - 1 / 2))


@pytest.mark.parametrize("seed", SEEDS)
def test_cohen_kappa_matches_statsmodels(seed):
    rng = np.random.default_rng(seed)
    a, b = _labels(rng, int(rng.integers(10, 200)), agree=rng.random())
    table = np.zeros((3, 3))
    np.add.at(table, (a, b), 1)
    assert cohen_kappa(a, b) == pytest.approx(inter_rater.cohens_kappa(table).kappa, abs=1e-12)


def test_cohen_kappa_is_nan_when_chance_agrees_fully():
    assert math.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))


def test_fleiss_kappa_by_its_formula():
    # two items, three judges; item 1: 0 0 1, item 2: 1 1 1
    counts = [[2, 1], [0, 3]]
    per_item = [(2 * 1 + 0) / (3 * 2), (3 * 2) / (3 * 2)]
    shares = [2 / 6, 4 / 6]
    expected = sum(s * s for s in shares)
    assert fleiss_kappa(counts) == pytest.approx((np.mean(per_item) - expected) / (1 - expected))


@pytest.mark.parametrize("seed", SEEDS)
def test_fleiss_kappa_matches_statsmodels(seed):
    rng = np.random.default_rng(seed)
    judges = int(rng.integers(3, 7))
    truth = rng.integers(0, 3, int(rng.integers(10, 120)))
    labels = np.where(rng.random((judges, len(truth))) < rng.random(), truth, rng.integers(0, 3, (judges, len(truth))))
    counts, _ = inter_rater.aggregate_raters(labels.T, n_cat=3)
    assert fleiss_kappa(counts) == pytest.approx(inter_rater.fleiss_kappa(counts), abs=1e-12)


def test_fleiss_kappa_refuses_an_item_with_one_label():
    with pytest.raises(ValidationError, match="at least two labels"):
        fleiss_kappa([[2, 0], [1, 0]])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("level", ["ordinal", "nominal", "interval"])
def test_krippendorff_alpha_matches_krippendorff_with_missing_labels(seed, level):
    rng = np.random.default_rng(seed)
    judges, items = int(rng.integers(2, 6)), int(rng.integers(10, 150))
    truth = rng.integers(0, 4, items).astype(float)
    data = np.where(rng.random((judges, items)) < 0.6, truth, rng.integers(0, 4, (judges, items)))
    data[rng.random(data.shape) < 0.3] = np.nan  # a third of the labels missing
    assert np.isnan(data).any()
    assert krippendorff_alpha(data, level) == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement=level), abs=1e-10)


def test_ordinal_alpha_weighs_a_far_disagreement_more():
    near = [[0, 1, 2, 2, 0], [0, 1, 2, 1, 0]]
    far = [[0, 1, 2, 2, 0], [0, 1, 2, 0, 0]]
    assert krippendorff_alpha(near) > krippendorff_alpha(far)
    assert krippendorff_alpha([[0, 1, 2], [0, 1, 2]]) == 1.0


def test_krippendorff_alpha_refuses_an_unknown_level():
    with pytest.raises(ValidationError, match="unknown level 'ratio'"):
        krippendorff_alpha([[0, 1], [1, 1]], "ratio")
