"""The runner's rounding of scores: what ``round`` gives, value, sign and type, whichever way it is computed."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from searchtrace.evals.runs.execution.loop import rounded

INTEGRAL = st.integers(-(2**60), 2**60).map(float) | st.sampled_from([0.0, -0.0, 1e300, -1.7976931348623157e308])


def _same(a: object, b: object) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return a == b


@given(values=st.lists(INTEGRAL | st.floats() | st.integers(), max_size=8) | st.lists(INTEGRAL, max_size=8),
       digits=st.sampled_from([6, 9]))
def test_rounded_is_round_of_each(values, digits):
    got = rounded(tuple(values), digits)
    want = tuple(round(v, digits) for v in values)
    assert len(got) == len(want) and all(_same(a, b) for a, b in zip(got, want)), (got, want)


def test_integral_scores_are_kept_as_given_and_others_rounded():
    scores = (100.0, 99.0, -0.0)
    assert rounded(scores, 9) is scores
    assert rounded((0.1 + 0.2, 2.0), 9) == (0.3, 2.0)
    assert rounded((True, 2.0), 9) == (1, 2.0) and type(rounded((True,), 9)[0]) is int
