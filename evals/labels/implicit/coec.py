"""Clicks over expected clicks (COEC): a pair's clicks corrected for the positions its document was shown at.

A result high in a list is clicked more often whatever it is (position bias).
COEC divides a (query, doc) pair's clicks by the clicks an average result
would have had at the positions the pair was shown at::

    COEC(q, d) = clicks(q, d) / sum over the impressions i of (q, d) of CTR(r_i)

with CTR(r) the dataset's click-through rate at position r, estimated from
every impression read: clicks at r over impressions at r (Zhang and Jones,
2007, "Comparing click logs and editorial labels for training query
rewriting"; the baseline of Chapelle and Zhang, 2009, "A dynamic Bayesian
network click model for web search ranking"). COEC 1: clicked as often as an
average result where it was shown; 0 when never clicked.

Sparse positions: impressions at r never grow with r, so the positions past
the last one shown at least ``min_impressions`` times are the deepest, and
they pool into one rate. Each rate is then smoothed toward the mean rate p
over every shown slot, as ``prior`` impressions at that rate would:
``(c_r + prior * p) / (n_r + prior)``. No click at all: every rate is 0, and
so is every COEC.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MIN_POSITION_IMPRESSIONS", "PRIOR", "PairEvidence", "PositionCtr", "pair_evidence", "position_ctr"]

MIN_POSITION_IMPRESSIONS = 10
"""Fewest impressions a position needs to keep a rate of its own; the deeper ones pool together."""

PRIOR = 1.0
"""Pseudo-impressions at the mean rate each position's rate is smoothed with."""


@dataclass(frozen=True)
class PositionCtr:
    """Click-through rate by position.

    Attributes:
        impressions: impressions at each position (index 0: position 1).
        clicks: clicks at each position.
        ctr: the smoothed rate each position's expected clicks use (pooled past ``depth``).
        depth: positions with a rate of their own; deeper ones share the pooled rate.
        mean: clicks over shown slots, all positions.
    """

    impressions: np.ndarray
    clicks: np.ndarray
    ctr: np.ndarray
    depth: int
    mean: float

    def raw(self) -> np.ndarray:
        """Clicks over impressions at each position, unsmoothed and unpooled (NaN where never shown)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.impressions > 0, self.clicks / np.maximum(self.impressions, 1), np.nan)


def position_ctr(lengths: np.ndarray, click_positions: np.ndarray, min_impressions: int = MIN_POSITION_IMPRESSIONS,
                 prior: float = PRIOR) -> PositionCtr:
    """The rate by position of impressions showing ``lengths`` results each, clicked at ``click_positions``.

    Args:
        lengths: results each impression showed.
        click_positions: the 1-based position of every click (each at most its impression's length).
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    deepest = int(lengths.max(initial=0))
    shown = np.bincount(lengths, minlength=deepest + 1)[::-1].cumsum()[::-1][1:]  # impressions with >= r results
    clicks = np.bincount(np.asarray(click_positions, dtype=np.int64), minlength=deepest + 1)[1:deepest + 1]
    mean = float(clicks.sum() / shown.sum()) if shown.sum() else 0.0
    depth = int((shown >= min_impressions).sum())
    counts, slots = clicks.astype(np.float64), shown.astype(np.float64)
    if depth < deepest:  # the deep, sparse positions share one rate
        counts[depth:], slots[depth:] = counts[depth:].sum(), slots[depth:].sum()
    ctr = (counts + prior * mean) / (slots + prior)
    return PositionCtr(shown, clicks, ctr, depth, mean)


@dataclass(frozen=True)
class PairEvidence:
    """Per pair (index: the pair's number): its clicks, impressions, expected clicks and COEC."""

    clicks: np.ndarray
    impressions: np.ndarray
    expected: np.ndarray
    coec: np.ndarray


def pair_evidence(slot_pairs: np.ndarray, slot_positions: np.ndarray, click_pairs: np.ndarray, ctr: PositionCtr,
                  n_pairs: int) -> PairEvidence:
    """COEC of every pair from its shown slots and its clicks.

    Args:
        slot_pairs, slot_positions: one entry per result shown: the pair's number and its 1-based position.
        click_pairs: the pair's number of every click.
        ctr: the rate by position.
        n_pairs: how many pairs are numbered.
    """
    expected = np.bincount(slot_pairs, weights=ctr.ctr[np.asarray(slot_positions) - 1], minlength=n_pairs)
    impressions = np.bincount(slot_pairs, minlength=n_pairs)
    clicks = np.bincount(click_pairs, minlength=n_pairs)
    coec = np.divide(clicks, expected, out=np.zeros(n_pairs), where=expected > 0)
    return PairEvidence(clicks, impressions, expected, coec)
