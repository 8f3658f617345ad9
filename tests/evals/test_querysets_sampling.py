"""Query-set sampling: what each method chooses, and inclusion probabilities checked against exact values."""

from __future__ import annotations

import hashlib
import itertools

import numpy as np
import pytest

from searchtrace.evals.labels.querysets import Sampling, normalize, query_id, sample, successive_inclusion


def exact_successive(weights: list[float], n: int) -> np.ndarray:
    """Inclusion probabilities of drawing n items one after another, each with probability proportional to
    its weight among those left: summed over every ordered draw (an independent, brute-force reference)."""
    out = np.zeros(len(weights))
    for order in itertools.permutations(range(len(weights)), n):
        p, left = 1.0, float(sum(weights))
        for i in order:
            p *= weights[i] / left
            left -= weights[i]
        out[list(order)] += p
    return out


def test_normalized_text_and_stable_ids():
    assert normalize("  Which\tRIVER  runs\n past? ") == "which river runs past?"
    assert normalize("Cafe\u0301") == normalize("Café")  # one character or a letter and its accent: NFC
    assert query_id("Which river?") == query_id("which   RIVER?") == (
        "q" + hashlib.sha256(b"which river?").hexdigest()[:16])
    assert query_id("Which river?") != query_id("Which rivers?")


def test_all_and_a_sample_as_large_as_the_queries_take_each_with_certainty():
    counts = np.array([3, 1, 2])
    for method, n in [(Sampling.ALL, None), (Sampling.RANDOM, 3), (Sampling.FREQUENCY, 5), (Sampling.TOP, 3)]:
        got = sample(method, counts, n, seed=1)
        assert sorted(got.chosen.tolist()) == [0, 1, 2] and got.probability.tolist() == [1.0, 1.0, 1.0]


def test_top_takes_the_most_asked_and_breaks_ties_by_the_first_asked():
    counts = np.array([3, 5, 1, 5, 2])
    assert sample(Sampling.TOP, counts, 1, seed=0).chosen.tolist() == [1]
    got = sample(Sampling.TOP, counts, 3, seed=7)
    assert got.chosen.tolist() == [1, 3, 0] and got.probability.tolist() == [1.0, 1.0, 1.0]


def test_random_is_seeded_distinct_and_uniform():
    counts = np.array([50, 1, 1, 1, 1, 1, 1, 1])
    first = sample(Sampling.RANDOM, counts, 3, seed=11)
    assert first.chosen.tolist() == sample(Sampling.RANDOM, counts, 3, seed=11).chosen.tolist()
    assert len(set(first.chosen.tolist())) == 3 and first.probability.tolist() == [3 / 8] * 3
    hits = np.zeros(len(counts))
    for seed in range(20_000):
        hits[sample(Sampling.RANDOM, counts, 3, seed=seed).chosen] += 1
    assert np.allclose(hits / 20_000, 3 / 8, atol=0.02)  # the frequent query is no likelier


def test_frequency_draws_as_successive_sampling_does():
    weights = [8.0, 4.0, 2.0, 1.0, 1.0]
    exact = exact_successive(weights, 2)
    hits = np.zeros(len(weights))
    draws = 20_000
    for seed in range(draws):
        got = sample(Sampling.FREQUENCY, np.array(weights), 2, seed=seed)
        assert len(set(got.chosen.tolist())) == 2
        hits[got.chosen] += 1
    assert np.allclose(hits / draws, exact, atol=0.015)


@pytest.mark.parametrize("weights, n", [([8, 4, 2, 1, 1], 2), ([8, 4, 2, 1, 1], 3), ([5, 5, 1, 1, 1, 1], 2),
                                        ([30, 9, 7, 5, 3, 2, 1, 1], 4)])
def test_the_written_probabilities_approximate_the_exact_ones(weights, n):
    approx = successive_inclusion(np.array(weights, dtype=float), n)
    assert approx.sum() == pytest.approx(n, abs=1e-9)
    assert np.all(np.diff(approx) <= 1e-12)  # in the order of the weights
    assert np.abs(approx - exact_successive(weights, n)).max() < 0.05
    got = sample(Sampling.FREQUENCY, np.array(weights), n, seed=3)
    assert got.probability.tolist() == approx[got.chosen].tolist()


def test_equal_weights_give_the_uniform_probability():
    assert np.allclose(successive_inclusion(np.ones(10), 4), 0.4)
    assert np.allclose(successive_inclusion(np.full(7, 3.0), 1), 1 / 7)
