"""Statistics: hand-computed values and cross-checks against scipy and sklearn."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats as scipy_stats
from sklearn.metrics import brier_score_loss, roc_auc_score

from searchtrace.errors import ValidationError
from searchtrace.evals.scoring import stats

# --- bootstrap -----------------------------------------------------------------


def test_bootstrap_of_a_constant_difference_is_that_constant():
    ci = stats.paired_bootstrap_ci([0.1, 0.5, 0.9], [0.3, 0.7, 1.1])
    assert ci.low == pytest.approx(0.2) and ci.high == pytest.approx(0.2) and ci.level == 0.95


def test_bootstrap_is_seeded_and_brackets_the_mean():
    rng = np.random.default_rng(1)
    a, b = rng.random(50), rng.random(50) + 0.1
    first = stats.paired_bootstrap_ci(a, b, seed=3)
    assert first == stats.paired_bootstrap_ci(a, b, seed=3)
    assert first != stats.paired_bootstrap_ci(a, b, seed=4)
    assert first.low < (b - a).mean() < first.high


def test_bootstrap_matches_its_definition():
    a, b = np.array([0.0, 0.0, 1.0, 0.5]), np.array([1.0, 0.0, 0.5, 0.5])
    ci = stats.paired_bootstrap_ci(a, b, n_resamples=2000, seed=9)
    rng = np.random.default_rng(9)
    means = (b - a)[rng.integers(0, 4, size=(2000, 4))].mean(axis=1)
    assert (ci.low, ci.high) == tuple(np.percentile(means, [2.5, 97.5]))


def test_bootstrap_blocks_give_the_same_stream(monkeypatch):
    from searchtrace.evals.scoring.stats import significance

    a, b = np.arange(30.0) % 7, np.arange(30.0) % 5
    whole = stats.paired_bootstrap_ci(a, b, n_resamples=1000)
    monkeypatch.setattr(significance, "_BLOCK_CELLS", 30 * 7)  # blocks of 7 resamples
    assert stats.paired_bootstrap_ci(a, b, n_resamples=1000) == whole


# --- t-test and randomization test --------------------------------------------


def test_t_test_matches_scipy():
    a, b = [0.2, 0.4, 0.6, 0.1, 0.9], [0.3, 0.4, 0.8, 0.2, 0.7]
    assert stats.paired_t_test(a, b) == pytest.approx(scipy_stats.ttest_rel(b, a).pvalue, abs=0)


def test_t_test_edge_cases():
    assert stats.paired_t_test([0.1, 0.2], [0.1, 0.2]) == 1.0
    assert stats.paired_t_test([0.0, 1.0], [0.5, 1.5]) == 0.0
    assert math.isnan(stats.paired_t_test([0.1], [0.2]))


def test_randomization_exact_count_on_a_tiny_sample():
    """n = 3 has 8 sign patterns; the test must agree with their exact distribution."""
    d = np.array([0.5, 0.25, -0.125])
    observed = abs(d.mean())
    exact = np.mean([abs((np.array(s) * d).mean()) >= observed - 1e-12 for s in itertools.product([-1, 1], repeat=3)])
    p = stats.randomization_test(np.zeros(3), d, n_resamples=20_000, seed=1)
    assert exact == 4 / 8  # +-(1, 1, 1) and +-(1, 1, -1) reach |0.625 / 3|
    assert p == pytest.approx(exact, abs=0.01)


def test_randomization_p_formula_and_zero_differences():
    assert stats.randomization_test([0.3, 0.4], [0.3, 0.4], n_resamples=99) == 1.0
    # n = 1: every flip has |mean| = |d|, so all B count: (B + 1) / (B + 1).
    assert stats.randomization_test([0.0], [1.0], n_resamples=50) == 1.0
    rng = np.random.default_rng(0)
    a = rng.random(200)
    p = stats.randomization_test(a, a + 0.2, n_resamples=999)
    assert p == 1 / 1000  # no flip reaches a uniform +0.2 shift


def test_randomization_is_seeded():
    rng = np.random.default_rng(2)
    a, b = rng.random(40), rng.random(40)
    assert stats.randomization_test(a, b, seed=5) == stats.randomization_test(a, b, seed=5)


# --- Holm ----------------------------------------------------------------------


def test_holm_by_hand():
    # Sorted: 0.01 * 3 = 0.03, 0.03 * 2 = 0.06, 0.04 * 1 -> max(0.06, 0.04) = 0.06.
    np.testing.assert_allclose(stats.holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    np.testing.assert_allclose(stats.holm([0.5, 0.9]), [1.0, 1.0])
    adjusted = stats.holm([0.02, float("nan"), 0.01])
    np.testing.assert_allclose(adjusted[[0, 2]], [0.02, 0.02])
    assert math.isnan(adjusted[1])
    assert stats.holm([]).shape == (0,)


# --- Kendall tau ---------------------------------------------------------------


def test_kendall_tau():
    # One discordant pair out of three: (2 - 1) / 3.
    assert stats.kendall_tau([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)
    x, y = [0.1, 0.4, 0.4, 0.9, 0.3], [1, 2, 2, 5, 0]
    assert stats.kendall_tau(x, y) == pytest.approx(scipy_stats.kendalltau(x, y).statistic)
    assert math.isnan(stats.kendall_tau([1], [2]))
    assert math.isnan(stats.kendall_tau([1, 1, 1], [1, 2, 3]))


@pytest.mark.parametrize("seed", range(20))
def test_kendall_tau_matches_scipy_with_ties(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 400))
    x = rng.integers(0, int(rng.integers(1, 12)), n).astype(float)  # few distinct values: many ties
    y = np.where(rng.random(n) < 0.5, x, rng.integers(0, 8, n)) + rng.integers(0, 2, n) * 0.5
    expected = scipy_stats.kendalltau(x, y).statistic
    got = stats.kendall_tau(x, y)
    assert (math.isnan(got) and math.isnan(expected)) or got == pytest.approx(expected, abs=1e-12)


def test_average_ranks_match_scipy():
    from searchtrace.evals.scoring.stats.reliability import average_ranks

    rng = np.random.default_rng(7)
    for values in ([3.0, 1.0, 2.0], [0.5, 0.5, 0.5], rng.integers(0, 5, 300).astype(float), rng.random(50)):
        values = np.asarray(values)
        np.testing.assert_array_equal(average_ranks(values), scipy_stats.rankdata(values))


def test_eval_report_does_not_import_scipy_stats():
    """scipy.stats costs about 1.6 s to import, a third of a warm eval: only `compare` may load it."""
    code = "import sys, searchtrace.evals.runs.analysis, searchtrace.evals.runs.execution; print('scipy.stats' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- ECE, Brier, AUROC -----------------------------------------------------------


def test_ece_by_hand():
    p = [0.05, 0.15, 0.95, 1.0]
    y = [0, 1, 1, 1]
    # Bins: [0, .1): p .05 y 0 -> gap .05; [.1, .2): p .15 y 1 -> .85; [.9, 1]: p .975 y 1 -> .025.
    expected = (1 * 0.05 + 1 * 0.85 + 2 * 0.025) / 4
    assert stats.expected_calibration_error(p, y) == pytest.approx(expected)
    assert stats.ece is stats.expected_calibration_error


def test_ece_of_perfect_calibration_is_zero():
    p = np.repeat([0.25, 0.75], 4)
    y = np.array([1, 0, 0, 0, 1, 1, 1, 0])
    assert stats.expected_calibration_error(p, y) == pytest.approx(0.0)


def test_brier_matches_sklearn():
    rng = np.random.default_rng(4)
    p, y = rng.random(100), rng.integers(0, 2, 100)
    assert stats.brier_score(p, y) == pytest.approx(brier_score_loss(y, p), abs=1e-15)
    assert stats.brier_score([1.0, 0.0], [1, 1]) == 0.5


def test_auroc_by_hand_and_against_sklearn():
    # Pairs (pos, neg): (0.8 > 0.3), (0.8 > 0.5), (0.5 = 0.5 -> 1/2), (0.5 > 0.3): 3.5 / 4.
    assert stats.auroc([0.8, 0.5, 0.5, 0.3], [1, 1, 0, 0]) == pytest.approx(3.5 / 4)
    rng = np.random.default_rng(5)
    s, y = np.round(rng.random(300), 1), rng.integers(0, 2, 300)
    assert stats.auroc(s, y) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert math.isnan(stats.auroc([0.1, 0.2], [1, 1]))


# --- risk-coverage ---------------------------------------------------------------


def test_risk_coverage_by_hand():
    curve = stats.risk_coverage([0.9, 0.8, 0.8, 0.1], [1, 0, 1, 0])
    np.testing.assert_allclose(curve.thresholds, [0.9, 0.8, 0.1])
    np.testing.assert_allclose(curve.coverage, [1 / 4, 3 / 4, 4 / 4])
    np.testing.assert_allclose(curve.risk, [0.0, 1 / 3, 2 / 4])
    assert curve.aurc == pytest.approx(0.0 * 1 / 4 + 1 / 3 * 2 / 4 + 2 / 4 * 1 / 4)


# --- validation --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: stats.paired_t_test([1.0, 2.0], [1.0]), "differ in length"),
        (lambda: stats.expected_calibration_error([1.5], [1]), "must lie in [0, 1]"),
        (lambda: stats.brier_score([0.5], [2]), "must be 0 or 1"),
        (lambda: stats.auroc([float("nan")], [1]), "finite"),
        (lambda: stats.paired_bootstrap_ci([1.0], [1.0], n_resamples=0), "positive integer"),
        (lambda: stats.risk_coverage([], []), "at least one"),
    ],
)
def test_bad_input_is_a_validation_error(call, message):
    with pytest.raises(ValidationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        call()
