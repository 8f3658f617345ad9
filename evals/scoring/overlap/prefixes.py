"""What two rankings' prefixes hold at every depth: the counts rank-biased overlap is computed from.

Ties are as Webber, Moffat and Zobel (2010, section 4.3) define them: tied items
share a rank, that of the first of them (``1, 2, 2, 4``), so the prefix of depth
``d``, ``S_{:d}``, holds every item ranked ``<= d``, ties running past ``d``
included, and may hold more than ``d`` items. The overlap ``X_d = |S_{:d} ∩ L_{:d}|``
counts the items in both prefixes: an item ranked ``r`` in one and ``r'`` in the
other is in both from depth ``max(r, r')`` on. A ranking's rows are ranked by
score here, so a tie is an equal score.

Everything is counted for many pairs of rankings at once, from rows (a pair
index and a rank per row): one ``bincount`` and one cumulative sum per array,
no loop over the pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Prefixes", "counted", "tie_ranks"]


def tie_ranks(starts: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's 0-based position in its ranking, and its 1-based rank, tied rows sharing the first one's.

    Args:
        starts: (n,) bool, True where a ranking's rows begin (rows grouped by ranking, best first).
        scores: (n,) each row's score, non-increasing within a ranking.
    """
    index = np.arange(len(scores))
    new_score = starts.copy()
    new_score[1:] |= scores[1:] != scores[:-1]
    first_of_ranking = np.maximum.accumulate(np.where(starts, index, 0))
    first_of_tie = np.maximum.accumulate(np.where(new_score, index, 0))
    return index - first_of_ranking, first_of_tie - first_of_ranking + 1


@dataclass(frozen=True, eq=False)
class Prefixes:
    """Per pair of rankings and depth ``d = 0..w`` (column ``d``): the counts of their prefixes.

    Attributes:
        overlap: (n, w + 1) ``X_d``, the items in both prefixes of depth ``d``.
        sizes: (n, w + 1) each ranking's prefix size ``|S_{:d}|`` (first, second).
        lengths: (n,) each ranking's length (first, second).
    """

    overlap: np.ndarray
    sizes: tuple[np.ndarray, np.ndarray]
    lengths: tuple[np.ndarray, np.ndarray]

    @property
    def depth(self) -> int:
        """``w``, the last depth counted: the longest ranking's length."""
        return self.overlap.shape[1] - 1


def _cumulated(pair: np.ndarray, depth: np.ndarray, n: int, w: int) -> np.ndarray:
    """(n, w + 1): the rows of each pair at each depth or above (``depth`` in 0..w)."""
    counts = np.bincount(pair.astype(np.int64) * (w + 1) + depth, minlength=n * (w + 1)).reshape(n, w + 1)
    return np.cumsum(counts, axis=1)


def counted(n: int, first: tuple[np.ndarray, np.ndarray], second: tuple[np.ndarray, np.ndarray],
            shared: tuple[np.ndarray, np.ndarray, np.ndarray]) -> Prefixes:
    """The prefixes of ``n`` pairs of rankings.

    Args:
        n: the number of pairs.
        first, second: each ranking's rows as (pair index, rank) arrays.
        shared: the items in both rankings of a pair: (pair index, rank in first, rank in second).
    """
    lengths = (np.bincount(first[0], minlength=n), np.bincount(second[0], minlength=n))
    w = int(max(lengths[0].max(initial=0), lengths[1].max(initial=0)))
    pair, rank_first, rank_second = shared
    return Prefixes(overlap=_cumulated(pair, np.maximum(rank_first, rank_second), n, w),
                    sizes=(_cumulated(*first, n, w), _cumulated(*second, n, w)), lengths=lengths)
