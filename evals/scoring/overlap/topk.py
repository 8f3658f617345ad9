"""The top k of two rankings as sets: Jaccard@k and the documents new in the candidate's top k.

``S_{:k}`` here is a ranking's first ``k`` results as listed (a results page: ties
are broken as the ranking lists them, by document id for a run):

* Jaccard@k ``= |S_{:k} ∩ L_{:k}| / |S_{:k} ∪ L_{:k}|``, 1 when both are empty;
* new in top k ``= |L_{:k} \\ S_{:k}|``: the candidate's (``L``'s) documents the base's top k lacked.

:func:`top_k_arrays` computes both for many pairs at once; :func:`jaccard` and
:func:`new_in_top` for one.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

__all__ = ["jaccard", "new_in_top", "top_k_arrays"]


def jaccard(first: Sequence[Hashable], second: Sequence[Hashable], k: int) -> float:
    """``|S_{:k} ∩ L_{:k}| / |S_{:k} ∪ L_{:k}|``; 1 when both top k are empty."""
    a, b = set(first[:k]), set(second[:k])
    return len(a & b) / len(a | b) if a | b else 1.0


def new_in_top(base: Sequence[Hashable], candidate: Sequence[Hashable], k: int) -> int:
    """How many of the candidate's top ``k`` the base's top ``k`` lacks."""
    return len(set(candidate[:k]) - set(base[:k]))


def top_k_arrays(lengths: tuple[np.ndarray, np.ndarray], shared: tuple[np.ndarray, np.ndarray, np.ndarray],
                 k: int) -> tuple[np.ndarray, np.ndarray]:
    """Jaccard@k and new in top k (of the second ranking) for every pair, as (n,) arrays.

    Args:
        lengths: (n,) each pair's ranking lengths (base, candidate).
        shared: the documents in both rankings of a pair: (pair index, 0-based position in base, in candidate).
        k: the cutoff.
    """
    pair, in_base, in_candidate = shared
    n = len(lengths[0])
    common = np.bincount(pair[(in_base < k) & (in_candidate < k)], minlength=n)
    base, candidate = np.minimum(lengths[0], k), np.minimum(lengths[1], k)
    union = base + candidate - common
    return np.divide(common, union, out=np.ones(n), where=union > 0), candidate - common
