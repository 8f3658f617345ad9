"""Fuse stage: combine the dense, keyword and graph candidate lists.

* RRF, weighted (Cormack, Clarke & Buettcher 2009):
  ``score(d) = sum_s w_s / (k0 + rank_s(d))`` over the stages ``s`` that ranked ``d``.
* Weighted sums of normalized scores, ``score(d) = sum_s w_s * n_s(x_s(d))``, a
  stage that missed ``d`` adding 0 (CombSUM, Fox & Shaw 1994), with ``n_s``:

  - ``dbsf`` (the default), distribution-based score fusion (Mazzeschi 2023, as
    in Qdrant): ``(x - (mu - 3 sigma)) / (6 sigma)`` over the list's mean and
    standard deviation, so one outlying top score does not squash the rest;
  - ``zscore``: ``(x - mu) / sigma``;
  - ``weighted``: min-max, ``(x - min) / (max - min)``.

  A list whose scores are all equal normalizes to 1.
* Keyword then dense: the keyword candidates, reordered by their dense similarity.

Every method breaks ties by document id so the result never depends on the
order of the input lists.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence

import numpy as np

from searchtrace.names import Stage
from searchtrace.retriever.config.model import FusionConfig
from searchtrace.retriever.types import Candidates, Fused, FusionMethod

_STAGE_ORDER = {stage: i for i, stage in enumerate(Stage)}


def canonical(lists: Sequence[Candidates]) -> list[Candidates]:
    """The lists in pipeline stage order: floating-point sums then add up in one order,
    so equal fused scores stay exactly equal (and tie-break by id) whatever the input order."""
    return sorted(lists, key=lambda c: _STAGE_ORDER[c.stage])


def _union(lists: Sequence[Candidates]) -> tuple[np.ndarray, dict[Stage, np.ndarray]]:
    """All ids (sorted) and, per stage, the row of each of its ids in that union.

    Python's ``sorted`` and a dict: ids are ``str`` objects, which numpy's
    ``unique`` and ``searchsorted`` would compare one Python call at a time anyway.
    """
    per_list = [c.ids.tolist() for c in lists]
    distinct = sorted(set().union(*per_list))
    row = {d: i for i, d in enumerate(distinct)}
    ids = np.empty(len(distinct), dtype=object)
    ids[:] = distinct
    rows = {c.stage: np.fromiter(map(row.__getitem__, these), dtype=np.int64, count=len(these))
            for c, these in zip(lists, per_list)}
    return ids, rows


def _components(lists: Sequence[Candidates], n: int, rows: dict[Stage, np.ndarray]
                ) -> tuple[dict[Stage, np.ndarray], dict[Stage, np.ndarray]]:
    components: dict[Stage, np.ndarray] = {}
    ranks: dict[Stage, np.ndarray] = {}
    for c in lists:
        comp = np.full(n, np.nan)
        rank = np.zeros(n, dtype=np.int64)
        comp[rows[c.stage]] = c.scores
        rank[rows[c.stage]] = np.arange(1, len(c) + 1)
        components[c.stage] = comp
        ranks[c.stage] = rank
    return components, ranks


def _ordered(ids: np.ndarray, scores: np.ndarray, components: dict[Stage, np.ndarray],
             ranks: dict[Stage, np.ndarray]) -> Fused:
    # ids are sorted ascending, so a stable sort on -score breaks ties by id.
    order = np.argsort(-scores, kind="stable")
    return Fused(ids, scores, components, ranks).take(order)


def rrf(lists: Sequence[Candidates], k0: int, weights: dict[Stage, float]) -> Fused:
    """Weighted reciprocal rank fusion."""
    lists = canonical(lists)
    ids, rows = _union(lists)
    scores = np.zeros(len(ids))
    for c in lists:
        w = weights.get(c.stage, 1.0)
        np.add.at(scores, rows[c.stage], w / (k0 + np.arange(1, len(c) + 1)))
    components, ranks = _components(lists, len(ids), rows)
    return _ordered(ids, scores, components, ranks)


def minmax(scores: np.ndarray) -> np.ndarray:
    """Scale to [0, 1]; a constant list maps to 1."""
    if len(scores) == 0:
        return scores.astype(np.float64)
    lo, hi = float(np.min(scores)), float(np.max(scores))
    if hi - lo <= 1e-12:
        return np.ones(len(scores))
    return (scores - lo) / (hi - lo)


def _standardize(scores: np.ndarray, spread: float) -> np.ndarray | None:
    """``(x - mu) / (spread * sigma)``, or None when the list is constant (or empty)."""
    if len(scores) == 0:
        return scores.astype(np.float64)
    sigma = float(np.std(scores))
    if sigma <= 1e-12:
        return None
    return (scores - float(np.mean(scores))) / (spread * sigma)


def dbsf(scores: np.ndarray) -> np.ndarray:
    """Distribution-based normalization: ``mu - 3 sigma`` maps to 0, ``mu + 3 sigma`` to 1."""
    z = _standardize(scores, 6.0)
    return np.ones(len(scores)) if z is None else z + 0.5


def zscore(scores: np.ndarray) -> np.ndarray:
    """``(x - mu) / sigma``; a constant list maps to 1."""
    z = _standardize(scores, 1.0)
    return np.ones(len(scores)) if z is None else z


NORMALIZERS = {FusionMethod.DBSF: dbsf, FusionMethod.ZSCORE: zscore, FusionMethod.WEIGHTED: minmax}


def weighted_sum(lists: Sequence[Candidates], weights: dict[Stage, float],
                 normalize: Callable[[np.ndarray], np.ndarray] = minmax) -> Fused:
    """Weighted sum of normalized scores; a stage that missed a document adds 0."""
    lists = canonical(lists)
    ids, rows = _union(lists)
    scores = np.zeros(len(ids))
    for c in lists:
        np.add.at(scores, rows[c.stage], weights.get(c.stage, 1.0) * normalize(c.scores))
    components, ranks = _components(lists, len(ids), rows)
    return _ordered(ids, scores, components, ranks)


def keyword_then_dense(lists: Sequence[Candidates], dense_of: dict[str, float]) -> Fused:
    """Keyword candidates reordered by dense similarity (``dense_of``: id -> cosine)."""
    ids, rows = _union(lists)
    components, ranks = _components(lists, len(ids), rows)
    keep = np.zeros(len(ids), dtype=bool)
    keep[rows.get(Stage.KEYWORD, np.empty(0, dtype=np.int64))] = True
    scores = np.array([dense_of.get(i, -1.0) for i in ids], dtype=np.float64)
    kept = np.flatnonzero(keep)
    fused = Fused(ids, scores, components, ranks).take(kept)
    return _ordered(fused.ids, fused.scores, fused.components, fused.ranks)


def best_ids(lists: Sequence[Candidates], config: FusionConfig, n: int) -> list[str]:
    """The first ``n`` ids of ``fuse(lists, config)``, without building the fused arrays.

    The same sums in the same order (stage order, then list order), so the same
    floats and ties (by id); ``keyword_then_dense`` is not supported here.
    """
    if config.method is FusionMethod.KEYWORD_THEN_DENSE:
        raise ValueError("best_ids needs a score or rank fusion, not keyword_then_dense")
    total: dict[str, float] = {}
    for c in canonical(lists):
        w = config.weight(c.stage)
        if config.method is FusionMethod.RRF:
            part = w / (config.k0 + np.arange(1, len(c) + 1))
        else:
            part = w * NORMALIZERS[config.method](c.scores)
        if not total:  # the first list: 0.0 + x is x
            total = dict(zip(c.ids.tolist(), part.tolist()))
            continue
        get = total.get
        for doc, x in zip(c.ids.tolist(), part.tolist()):
            total[doc] = get(doc, 0.0) + x
    return [doc for doc, _ in heapq.nsmallest(n, total.items(), key=lambda kv: (-kv[1], kv[0]))]


def fuse(lists: Sequence[Candidates], config: FusionConfig, dense_of: dict[str, float] | None = None) -> Fused:
    """Fuse with the configured method."""
    weights = {s: config.weight(s) for s in Stage}
    if config.method is FusionMethod.RRF:
        return rrf(lists, config.k0, weights)
    if config.method in NORMALIZERS:
        return weighted_sum(lists, weights, NORMALIZERS[config.method])
    return keyword_then_dense(lists, dense_of or {})
