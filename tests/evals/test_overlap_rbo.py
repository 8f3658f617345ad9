"""Rank-biased overlap: against an independent implementation, its bounds, ties, edge cases; Jaccard@k and new in
top k by formula; the batch kernel against the scalar function."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

try:
    import rbo as reference  # the rbo package (changyaochen/rbo): RankingSimilarity.rbo_ext is eq. 32
except ImportError as exc:  # the independent check must not skip quietly
    raise ImportError("the RBO reference is missing: pip install --no-deps rbo (README's test command does; "
                      "it declares numpy<2 but runs on numpy 2)") from exc

from searchtrace.errors import ValidationError
from searchtrace.evals import RBO, jaccard, new_in_top, rbo
from searchtrace.evals.scoring.overlap.rank_biased import rbo_arrays
from searchtrace.evals.scoring.rankings import Run
from searchtrace.evals.verdicts.overlap import top_weight
from searchtrace.evals.verdicts.overlap.pairs import pair_runs

VOCABULARY = [f"d{i}" for i in range(80)]  # shared, so random rankings overlap
PS = (0.9, 0.98)


def random_pairs(n: int, seed: int, longest: int = 60) -> list[tuple[list[str], list[str]]]:
    rng = random.Random(seed)
    return [(rng.sample(VOCABULARY, rng.randint(0, longest)), rng.sample(VOCABULARY, rng.randint(0, longest)))
            for _ in range(n)]


def H(p: float, k: int) -> float:
    return sum(p ** d / d for d in range(1, k + 1))


# -- the independent implementation, and the bounds ---------------------------------


@pytest.mark.parametrize("p", PS)
def test_ext_equals_the_rbo_package_and_lies_within_its_bounds(p):
    pairs = random_pairs(600, seed=26)
    assert sum(len(a) != len(b) for a, b in pairs) >= 500 and sum(not a or not b for a, b in pairs) >= 1
    for first, second in pairs:
        ours = rbo(first, second, p)
        assert ours.ext == pytest.approx(reference.RankingSimilarity(first, second).rbo_ext(p), abs=1e-9), (first,
                                                                                                           second)
        assert ours.min <= ours.ext <= ours.min + ours.res + 1e-12
        assert 0 <= ours.min and ours.res >= 0 and ours.max <= 1 + 1e-12


def test_identical_lists_agree_fully_and_their_bounds_add_up_to_one():
    for first, _ in random_pairs(50, seed=1, longest=40):
        if first:
            for p in (0.5, *PS):
                same = rbo(first, list(first), p)
                assert same.ext == pytest.approx(1, abs=1e-12) and same.max == pytest.approx(1, abs=1e-12)


def test_disjoint_lists_have_rbo_zero():
    for p in PS:
        assert rbo(VOCABULARY[:10], VOCABULARY[10:35], p).ext == 0 and rbo(VOCABULARY[:3], VOCABULARY[3:6], p).min == 0


def test_empty_rankings():
    both, one = rbo([], [], 0.9), rbo([], ["a"], 0.9)
    assert (both.ext, both.min, both.res) == (1.0, 1.0, 0.0)  # both empty: they agree on all they hold
    assert one == rbo(["a"], [], 0.9) == RBO(0.9, 0.0, 0.0, 0.0)  # one empty, the other not


def test_a_prefix_of_a_longer_list_extrapolates_to_one_and_its_residual_is_eq_30():
    p, s, l = 0.9, 7, 26  # noqa: E741 (the paper's names)
    got = rbo(VOCABULARY[:s], VOCABULARY[:l], p)
    f = l + s - s  # X_l = s
    res = p ** s + p ** l - p ** f - (1 - p) / p * (s * (H(p, f) - H(p, s)) + l * (H(p, f) - H(p, l))
                                                      + s * (math.log(1 / (1 - p)) - H(p, f)))
    assert got.ext == pytest.approx(1, abs=1e-12) and got.res == pytest.approx(res, abs=1e-12)
    # the lower bound: eq. 11 to depth l, X_d = d up to s and s after
    low = (1 - p) / p * (sum(min(d, s) / d * p ** d for d in range(1, l + 1)) + s * (math.log(1 / (1 - p)) - H(p, l)))
    assert got.min == pytest.approx(low, abs=1e-12)


def test_bad_input_is_a_validation_error():
    for call in (lambda: rbo(["a"], ["a"], 1.0), lambda: rbo(["a"], ["a"], 0), lambda: rbo(["a", "a"], ["a"]),
                 lambda: rbo(["a", "b"], ["a"], first_scores=[1.0, 2.0]), lambda: rbo(["a"], ["a"], second_scores=[])):
        with pytest.raises(ValidationError):
            call()


def test_top_weight_is_eq_21_as_the_rbo_package_computes_it():
    for p, depth in ((0.9, 10), (0.98, 50), (0.98, 100)):
        same = list(range(depth))
        assert top_weight(p, depth) == pytest.approx(reference.RankingSimilarity(same, same).top_weightness(p, depth),
                                                     abs=1e-12)
    assert round(top_weight(0.9, 10), 2) == 0.86 and round(top_weight(0.98, 50), 2) == 0.85


# -- ties -------------------------------------------------------------------------------


def test_ties_even_lengths_by_hand():
    """S = a, {b c}; L = c, a, b. Ranks: S a1 b2 c2, L c1 a2 b3; |S:d| = 1, 3, 3; |L:d| = 1, 2, 3;
    X = 0, 2, 3; A = 0, 2*2/(3+2), 2*3/(3+3)."""
    p = 0.9
    got = rbo(["a", "b", "c"], ["c", "a", "b"], p, first_scores=[3, 2, 2])
    agreed = 0 * p + 4 / 5 * p ** 2 + 1 * p ** 3
    assert got.ext == pytest.approx((1 - p) / p * agreed + 1 * p ** 3, abs=1e-12)
    assert got.min == pytest.approx((1 - p) / p * (agreed + 3 * (math.log(1 / (1 - p)) - H(p, 3))), abs=1e-12)
    assert got.res == pytest.approx(2 * p ** 3 - p ** 3 - (1 - p) / p * 3 * (math.log(1 / (1 - p)) - H(p, 3)),
                                    abs=1e-12)


def test_ties_uneven_lengths_by_hand():
    """S = a (s = 1); L = a, {b c} (l = 3). |L:d| = 1, 3, 3; past s, |S:d| = d. X = 1, 1, 1;
    A = 2/(1+1), 2/(2+3), 2/(3+3); A_s = 1; the unseen part sum_{d=2..3} 2(d-1)/(d+|L:d|) p^d."""
    p = 0.9
    got = rbo(["a"], ["a", "b", "c"], p, second_scores=[3, 1, 1])
    agreed = 1 * p + 2 / 5 * p ** 2 + 1 / 3 * p ** 3
    unseen = 2 / 5 * p ** 2 + 2 * 2 / 6 * p ** 3
    assert got.ext == pytest.approx((1 - p) / p * (agreed + 1 * unseen) + ((1 - 1) / 3 + 1) * p ** 3, abs=1e-12)
    assert got.min == pytest.approx((1 - p) / p * (agreed + 1 * (math.log(1 / (1 - p)) - H(p, 3))), abs=1e-12)
    f = 3 + 1 - 1
    assert got.res == pytest.approx((1 - p) / p * unseen + 2 * p ** 3 - p ** f
                                    - (1 - p) / p * (1 * (math.log(1 / (1 - p)) - H(p, f))), abs=1e-12)
    assert got.min <= got.ext <= got.max


def tied(rng: random.Random, n: int) -> tuple[list[str], list[float]]:
    """A ranking of ``n`` documents with scores in few values (many ties), best first."""
    items = rng.sample(VOCABULARY, n)
    return items, sorted((float(rng.randint(0, 5)) for _ in items), reverse=True)


def shuffled_within_ties(rng: random.Random, items: list[str], scores: list[float]) -> list[str]:
    out, start = [], 0
    while start < len(items):
        end = start
        while end < len(items) and scores[end] == scores[start]:
            end += 1
        out += rng.sample(items[start:end], end - start)
        start = end
    return out


def test_reordering_a_tie_group_changes_nothing_and_ties_keep_the_bounds():
    rng = random.Random(7)
    for _ in range(300):
        (a, sa), (b, sb) = tied(rng, rng.randint(0, 30)), tied(rng, rng.randint(0, 30))
        for p in PS:
            once = rbo(a, b, p, first_scores=sa, second_scores=sb)
            again = rbo(shuffled_within_ties(rng, a, sa), shuffled_within_ties(rng, b, sb), p, first_scores=sa,
                        second_scores=sb)
            assert once == again
            assert once.min - 1e-12 <= once.ext <= once.max + 1e-12 and once.max <= 1 + 1e-12


# -- the top k as sets ------------------------------------------------------------------------


def test_jaccard_and_new_in_top_k_by_formula():
    base, candidate = ["a", "b", "c", "d", "e"], ["c", "x", "a", "y", "b", "z"]
    assert jaccard(base, candidate, 3) == len({"a", "c"}) / len({"a", "b", "c", "x"})  # 2 / 4
    assert jaccard(base, candidate, 10) == 3 / 8
    assert new_in_top(base, candidate, 3) == len({"x"}) and new_in_top(base, candidate, 5) == len({"x", "y"})
    assert jaccard([], [], 10) == 1.0 and new_in_top([], [], 10) == 0
    assert jaccard(["a"], [], 10) == 0.0 and new_in_top([], ["a", "b"], 1) == 1


# -- the batch kernel ---------------------------------------------------------------------------


def as_run(rankings: list[tuple[list[str], list[float]]]) -> Run:
    rows = [(f"q{i}", doc, score) for i, (docs, scores) in enumerate(rankings) for doc, score in zip(docs, scores)]
    return Run.from_arrays(*zip(*rows)) if rows else Run.from_arrays([], [], [])


def test_the_batch_kernel_equals_the_scalar_function_query_by_query():
    rng = random.Random(3)
    base = [tied(rng, rng.randint(0, 60)) for _ in range(150)]
    candidate = [tied(rng, rng.randint(0, 60)) for _ in range(150)]
    base_run, candidate_run = as_run(base), as_run(candidate)
    queries = [f"q{i}" for i in range(150)]
    paired = pair_runs(base_run, candidate_run, queries)
    prefixes = paired.prefixes()
    jaccards, new = paired.top_k(10)
    listed = [run.to_dict() for run in (base_run, candidate_run)]  # each query's documents in the run's order
    for p in PS:
        ext, low, res = rbo_arrays(prefixes, p)
        for i, q in enumerate(queries):
            (a, sa), (b, sb) = base[i], candidate[i]
            one = rbo(a, b, p, first_scores=sa, second_scores=sb)
            assert (ext[i], low[i], res[i]) == pytest.approx((one.ext, one.min, one.res), abs=1e-12), q
            order = [list(side.get(q, {})) for side in listed]
            assert jaccards[i] == jaccard(*order, 10) and new[i] == new_in_top(*order, 10)
    assert np.all(paired.lengths()[0] == [len(a) for a, _ in base])
