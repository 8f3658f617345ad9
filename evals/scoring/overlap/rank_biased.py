"""Rank-biased overlap (Webber, Moffat and Zobel 2010, "A similarity measure for indefinite rankings", ACM TOIS 28(4)).

Two rankings ``S`` and ``L`` of lengths ``s <= l`` (``S`` is the shorter; the
measure is symmetric), seen to those depths, at persistence ``p`` in (0, 1);
``X_d`` and the prefixes are those of :mod:`.prefixes`, and ``A_d`` is the
agreement at depth ``d``, ``2 X_d / (|S_{:d}| + |L_{:d}|)`` (eq. 28, which
handles ties; without them it is ``X_d / d``), where past ``s`` the prefix of
``S`` counts ``d`` items, its ``d - s`` unseen ones included:

* ``ext``, the extrapolated point estimate, eq. 32 (uneven lengths; with
  ``s = l`` its middle sum vanishes and it is the even lists' estimate)::

      (1-p)/p [ sum_{d=1..l} A_d p^d + sum_{d=s+1..l} A_s (d-s)/d p^d ] + [ (X_l - X_s)/l + A_s ] p^l

* ``min``, the lower bound given what was seen: eq. 11's bound evaluated to
  depth ``l``, ``X_d`` counted from the prefixes up to ``l`` (``S`` whole past
  ``s``) and no unseen item matching anything (``X_d = X_l`` past ``l``)::

      (1-p)/p [ sum_{d=1..l} (X_d - X_l) p^d / d - X_l ln(1-p) ]

* ``res``, the residual, what the unseen items could still add: eq. 30 with
  ``f = l + s - X_l``::

      p^s + p^l - p^f - (1-p)/p [ s sum_{d=s+1..f} p^d/d + l sum_{d=l+1..f} p^d/d + X_l (ln 1/(1-p) - sum_{d=1..f} p^d/d) ]

so that ``min <= ext <= min + res``. Written with ties, ``X_d / d`` is ``A_d``
in ``min``, ``X_s / s`` is ``A_s`` in ``ext``, and over ``s < d <= l`` both
``ext``'s middle sum and the part of ``res`` that eq. 30 spells ``p^s - p^l - (1-p)/p
s sum_{d=s+1..l} p^d/d`` (that is ``(1-p)/p sum (d-s)/d p^d``) take ``2 (d-s) /
(|S_{:d}| + |L_{:d}|)`` for ``(d-s)/d``: the same without ties, and with ``L``
tied past ``s`` what keeps ``ext`` within the bounds.

Checked: ``ext`` against the rbo package's ``rbo_ext`` (its eq. 32) within
1e-9; ``min`` and ``res`` are what the model gives when every unseen item
matches as little, or as much, as it can (``res`` then takes eq. 30's form), and
their sum is 1 for identical rankings (``tests/test_overlap_rbo.py``).

Two empty rankings have RBO 1 (they agree on all they hold: nothing); one
empty and one not, 0; both with residual 0. :func:`rbo_arrays` computes many
pairs at once; :func:`rbo`, one pair, through the same arrays.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from searchtrace.errors import ValidationError
from searchtrace.evals.scoring.overlap.prefixes import Prefixes, counted, tie_ranks

__all__ = ["RBO", "rbo", "rbo_arrays", "top_weight"]


@dataclass(frozen=True)
class RBO:
    """Rank-biased overlap of two rankings at persistence ``p``: ``ext``, the point estimate, within
    ``[min, min + res]``."""

    p: float
    ext: float
    min: float
    res: float

    @property
    def max(self) -> float:
        """The upper bound, ``min + res``."""
        return self.min + self.res


def _check_p(p: float) -> None:
    if not 0 < p < 1:
        raise ValidationError(f"p must be in (0, 1), got {p!r}", field="p")


def _partial_sums(p: float, up_to: int) -> np.ndarray:
    """``H[k] = sum_{d=1..k} p^d / d`` for ``k = 0..up_to``."""
    d = np.arange(1, up_to + 1, dtype=np.float64)
    return np.concatenate([[0.0], np.cumsum(p ** d / d)])


def rbo_arrays(pre: Prefixes, p: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``ext``, ``min`` and ``res`` (see the module docstring) of every pair of ``pre``, as (n,) arrays."""
    _check_p(p)
    first, second = pre.lengths
    s, l = np.minimum(first, second), np.maximum(first, second)  # noqa: E741 (the paper's names)
    swap = (first > second)[:, None]
    size_s, size_l = np.where(swap, pre.sizes[1], pre.sizes[0]), np.where(swap, pre.sizes[0], pre.sizes[1])
    depth = np.arange(pre.depth + 1)
    seen = (depth >= 1) & (depth <= l[:, None])
    both = np.maximum(size_s, depth) + size_l  # |S_{:d}| + |L_{:d}|, S counting d items past s
    weight = np.where(seen, p ** depth / np.maximum(both, 1), 0.0)  # p^d / (|S_{:d}| + |L_{:d}|)
    agreed = 2 * (pre.overlap * weight).sum(axis=1)  # sum_{d=1..l} A_d p^d
    unseen = 2 * (np.maximum(depth - s[:, None], 0) * weight).sum(axis=1)  # sum_{d=s+1..l} 2(d-s)/(..) p^d
    rows = np.arange(len(s))
    x_s, x_l = pre.overlap[rows, s], pre.overlap[rows, l]
    a_s = 2 * x_s / np.maximum(size_s[rows, s] + size_l[rows, s], 1)
    h, tail, q = _partial_sums(p, 2 * pre.depth), -math.log1p(-p), (1 - p) / p
    p_l, f = p ** l.astype(np.float64), l + s - x_l
    ext = q * (agreed + a_s * unseen) + ((x_l - x_s) / np.maximum(l, 1) + a_s) * p_l
    low = q * (agreed + x_l * (tail - h[l]))
    res = q * unseen + 2 * p_l - p ** f.astype(np.float64) - q * ((s + l) * (h[f] - h[l]) + x_l * (tail - h[f]))
    empty, both_empty = s == 0, (l == 0).astype(np.float64)
    return np.where(empty, both_empty, ext), np.where(empty, both_empty, low), np.where(empty, 0.0, res)


def _ranks(items: Sequence[Hashable], scores: Sequence[float] | None, name: str) -> np.ndarray:
    """A ranking's tie ranks (equal scores tie; no scores: no ties)."""
    if len(set(items)) != len(items):
        raise ValidationError(f"the {name} ranking repeats an item", field=name)
    values = -np.arange(len(items), dtype=np.float64) if scores is None else np.asarray(scores, dtype=np.float64)
    if len(values) != len(items):
        raise ValidationError(f"the {name} ranking has {len(items)} items and {len(values)} scores", field=name)
    if np.any(values[1:] > values[:-1]) or np.isnan(values).any():
        raise ValidationError(f"the {name} ranking's scores must not increase (best first)", field=name)
    starts = np.zeros(len(values), dtype=bool)
    starts[:1] = True
    return tie_ranks(starts, values)[1]


def rbo(first: Sequence[Hashable], second: Sequence[Hashable], p: float = 0.9, *,
        first_scores: Sequence[float] | None = None, second_scores: Sequence[float] | None = None) -> RBO:
    """Rank-biased overlap of two rankings, best first; items with equal scores tie.

    Raises:
        ValidationError: ``p`` outside (0, 1), a repeated item, scores that increase or do not match the items.
    """
    _check_p(p)
    ranks = _ranks(first, first_scores, "first"), _ranks(second, second_scores, "second")
    where = {item: i for i, item in enumerate(first)}
    shared = [(where[x], k) for k, x in enumerate(second) if x in where]
    i, j = (np.array([pair[side] for pair in shared], dtype=np.int64) for side in (0, 1))
    pre = counted(1, (np.zeros(len(first), np.int64), ranks[0]), (np.zeros(len(second), np.int64), ranks[1]),
                  (np.zeros(len(i), np.int64), ranks[0][i], ranks[1][j]))
    ext, low, res = rbo_arrays(pre, p)
    return RBO(p, float(ext[0]), float(low[0]), float(res[0]))


def top_weight(p: float, depth: int) -> float:
    """The share of RBO's weight the first ``depth`` ranks carry at ``p`` (eq. 21)."""
    _check_p(p)
    head = sum(p ** i / i for i in range(1, depth))
    return 1 - p ** (depth - 1) + (1 - p) / p * depth * (math.log(1 / (1 - p)) - head)
