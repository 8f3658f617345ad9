"""Seeded samples of distinct queries, each chosen query with its inclusion probability.

``all`` and ``top`` choose with certainty (probability 1). ``random`` draws n
queries uniformly without replacement: n / D each, exactly. ``frequency`` draws
n without replacement with probability proportional to how often each was
asked, one after another (successive sampling), by Efraimidis and Spirakis'
keys (2006): the n smallest ``E_i / c_i``, ``E_i`` standard exponential. Its
exact inclusion probabilities sum over every order of drawing; we give Rosén's
approximation for this order sampling (Rosén 1997, "Asymptotic theory for order
sampling", J. Stat. Plan. Inference 62): ``pi_i = 1 - exp(-c_i * t)``, ``t``
solving ``sum_i pi_i = n``. It is exact as the queries grow many, sums to n,
and keeps the order of the counts; on small sets it is off by a few hundredths
(``tests/test_querysets.py`` measures it against the exact values).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from searchtrace.evals.labels.querysets.options import Sampling

__all__ = ["Sample", "sample", "successive_inclusion"]


@dataclass(frozen=True)
class Sample:
    """The chosen queries (positions into the counts sampled from) and each one's inclusion probability."""

    chosen: np.ndarray
    probability: np.ndarray


Sampler = Callable[[np.ndarray, int, np.random.Generator], Sample]


def sample(method: Sampling, counts: np.ndarray, n: int | None, seed: int) -> Sample:
    """Choose among queries asked ``counts`` times (in the order first asked): all of them, or ``n`` by ``method``.

    When ``n`` covers every query, each is chosen, with probability 1.
    """
    counts = np.asarray(counts, dtype=np.float64)
    if method is Sampling.ALL or n is None or n >= len(counts):
        return Sample(np.arange(len(counts)), np.ones(len(counts)))
    return SAMPLERS[method](counts, n, np.random.default_rng(seed))


def _top(counts: np.ndarray, n: int, rng: np.random.Generator) -> Sample:
    # most asked first; a tie goes to the query asked first (lexsort is stable on position)
    chosen = np.lexsort((np.arange(len(counts)), -counts))[:n]
    return Sample(chosen, np.ones(n))


def _random(counts: np.ndarray, n: int, rng: np.random.Generator) -> Sample:
    chosen = np.sort(rng.choice(len(counts), size=n, replace=False))
    return Sample(chosen, np.full(n, n / len(counts)))


def _frequency(counts: np.ndarray, n: int, rng: np.random.Generator) -> Sample:
    keys = rng.standard_exponential(len(counts)) / counts
    chosen = np.sort(np.argpartition(keys, n - 1)[:n])
    return Sample(chosen, successive_inclusion(counts, n)[chosen])


SAMPLERS: dict[Sampling, Sampler] = {Sampling.TOP: _top, Sampling.RANDOM: _random, Sampling.FREQUENCY: _frequency}
"""The sampler of each method that chooses n of more queries."""


def successive_inclusion(weights: np.ndarray, n: int) -> np.ndarray:
    """Rosén's approximate inclusion probabilities of successive sampling of ``n`` items by ``weights`` (> 0).

    ``1 - exp(-w_i * t)`` with ``t`` found by bisection so that they sum to ``n`` (n below the items' number).
    """
    weights = np.asarray(weights, dtype=np.float64)

    def total(t: float) -> float:
        return float(-np.expm1(-weights * t).sum())

    low, high = 0.0, 1.0 / weights.max()
    while total(high) < n:
        low, high = high, high * 2
    for _ in range(200):  # the interval halves each time: far below float precision long before
        middle = (low + high) / 2
        if middle in (low, high):
            break
        low, high = (middle, high) if total(middle) < n else (low, middle)
    return np.asarray(-np.expm1(-weights * high))
