"""A label-free comparison of two runs: per query, RBO, the top k as sets, the best band, latency and traces.

:class:`OverlapComparison` holds one array per measure over the shared queries
(base order), so means and shares are array sums; :class:`QueryOverlap` is one
query's row, made for the few queries a report lists.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from searchtrace.evals.scoring.overlap.rank_biased import RBO
from searchtrace.evals.verdicts.overlap.weights import weighted_mean
from searchtrace.names import Band

__all__ = ["BandChanges", "Means", "OverlapComparison", "QueryOverlap", "band_name"]

BANDS = tuple(Band)

CHANGED = 1e-9
"""How far below 1 a query's RBO is for its ranking to count as changed (rounding aside)."""


def band_name(index: int) -> str:
    """A best band's name by its index (``len(Band)``: ``none``, no result)."""
    return BANDS[index].value if index < len(BANDS) else "none"


def _clean(value: float) -> float | None:
    return None if math.isnan(value) else value


def _rbo_json(r: RBO) -> dict[str, float | None]:
    return {"ext": _clean(r.ext), "min": _clean(r.min), "res": _clean(r.res)}


@dataclass(frozen=True)
class QueryOverlap:
    """One shared query: RBO at each p, Jaccard@k, documents new in the candidate's top k, each side's best
    band, the latency change (candidate - base, ms) and each side's trace id (``""``: none)."""

    query_id: str
    rbo: tuple[RBO, ...]
    jaccard: float
    new_in_top: int
    bands: tuple[str, str]
    latency_delta_ms: float
    trace_ids: tuple[str, str]
    weight: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"query_id": self.query_id, "rbo": {str(r.p): _rbo_json(r) for r in self.rbo},
                "jaccard": self.jaccard, "new_in_top": self.new_in_top,
                "band": {"base": self.bands[0], "candidate": self.bands[1]},
                "latency_delta_ms": _clean(self.latency_delta_ms),
                "trace_id": {"base": self.trace_ids[0], "candidate": self.trace_ids[1]}, "weight": self.weight}


@dataclass(frozen=True)
class Means:
    """Means over the shared queries: each p's RBO (ext, min and res averaged), Jaccard@k, documents new in the
    top k and the latency change (ms; queries without a time left out)."""

    rbo: tuple[RBO, ...]
    jaccard: float
    new_in_top: float
    latency_delta_ms: float

    def to_json(self) -> dict[str, Any]:
        return {"rbo": {str(r.p): _rbo_json(r) for r in self.rbo}, "jaccard": _clean(self.jaccard),
                "new_in_top": _clean(self.new_in_top), "latency_delta_ms": _clean(self.latency_delta_ms)}


@dataclass(frozen=True)
class BandChanges:
    """Queries whose best band rose (``up``: a better band in the candidate), stayed or fell."""

    up: int
    same: int
    down: int


@dataclass(frozen=True, eq=False)
class OverlapComparison:
    """Two runs compared by their rankings alone, over the queries both searched.

    Attributes:
        base, candidate: the run ids.
        ps: the persistences RBO is computed at (the first orders :meth:`most_changed`); k: the top k's cutoff.
        query_ids: (n,) the shared queries, in the base's order.
        rbo: (len(ps), 3, n) ext, min and res of each p.
        jaccard, new_in_top: (n,) Jaccard@k and the documents new in the candidate's top k.
        bands: (2, n) each side's best band (index in ``Band``; ``len(Band)``: no result).
        latency_delta_ms: (n,) candidate - base total latency.
        trace_ids: (2, n) each side's trace id.
        weights: (n,) traffic weights (count / inclusion probability), or None: not a query set from traffic.
        only_in_base, only_in_candidate: queries one run searched and the other did not.
        notes: what a reader should know (no traffic weights, unchecked fingerprints, empty rankings).
        homes: the home folder each run was made in, whose trace store holds its traces (None: not recorded).
    """

    base: str
    candidate: str
    ps: tuple[float, ...]
    k: int
    query_ids: np.ndarray
    rbo: np.ndarray
    jaccard: np.ndarray
    new_in_top: np.ndarray
    bands: np.ndarray
    latency_delta_ms: np.ndarray
    trace_ids: np.ndarray
    weights: np.ndarray | None
    only_in_base: int
    only_in_candidate: int
    notes: tuple[str, ...] = ()
    homes: tuple[str | None, str | None] = (None, None)

    @property
    def shared(self) -> int:
        return len(self.query_ids)

    def ext(self, p: float | None = None) -> np.ndarray:
        """(n,) each query's extrapolated RBO at ``p`` (default: the first of :attr:`ps`)."""
        return self.rbo[self.ps.index(self.ps[0] if p is None else p), 0]

    def means(self) -> Means:
        """The means over the shared queries, each counting once."""
        return self._means(None)

    def weighted_means(self) -> Means | None:
        """The traffic-weighted means (``weights``), or None when the queries carry no traffic weights."""
        return None if self.weights is None else self._means(self.weights)

    def _means(self, w: np.ndarray | None) -> Means:
        rbo = tuple(RBO(p, *(weighted_mean(self.rbo[i, j], w) for j in range(3))) for i, p in enumerate(self.ps))
        return Means(rbo, weighted_mean(self.jaccard, w), weighted_mean(self.new_in_top.astype(np.float64), w),
                     weighted_mean(self.latency_delta_ms, w))

    def share_below(self, p: float, floor: float, weighted: bool = False) -> float:
        """The share of queries whose RBO at ``p`` is below ``floor``, traffic-weighted when asked and the queries
        carry weights."""
        below = (self.ext(p) < floor).astype(np.float64)
        return weighted_mean(below, self.weights if weighted else None)

    def band_names(self, side: int) -> list[str]:
        """Each shared query's best band on one side (0: base, 1: candidate), by name (``none``: no result)."""
        return [band_name(int(i)) for i in self.bands[side]]

    def band_changes(self) -> BandChanges:
        base, candidate = self.bands
        return BandChanges(int((candidate < base).sum()), int((candidate == base).sum()), int((candidate > base).sum()))

    def query(self, i: int) -> QueryOverlap:
        """The ``i``-th shared query's row."""
        return QueryOverlap(
            str(self.query_ids[i]), tuple(RBO(p, *map(float, self.rbo[j, :, i])) for j, p in enumerate(self.ps)),
            float(self.jaccard[i]), int(self.new_in_top[i]), (band_name(self.bands[0, i]), band_name(self.bands[1, i])),
            float(self.latency_delta_ms[i]), (str(self.trace_ids[0, i]), str(self.trace_ids[1, i])),
            None if self.weights is None else float(self.weights[i]))

    def most_changed(self, n: int = 10) -> tuple[QueryOverlap, ...]:
        """Of the queries whose ranking changed (RBO below 1 at the first p), the ``n`` of lowest RBO, then by
        query id."""
        ext = self.ext()
        changed = np.flatnonzero(ext < 1 - CHANGED)
        order = changed[np.lexsort((self.query_ids[changed].astype(str), ext[changed]))]
        return tuple(self.query(int(i)) for i in order[:n])

    def to_json(self, top: int = 10) -> dict[str, Any]:
        """A JSON-ready dict: the means, the band changes, the ``top`` most changed queries and every query."""
        weighted = self.weighted_means()
        changes = self.band_changes()
        return {"base": self.base, "candidate": self.candidate, "ps": list(self.ps), "k": self.k,
                "shared": self.shared, "only_in_base": self.only_in_base, "only_in_candidate": self.only_in_candidate,
                "notes": list(self.notes), "homes": {"base": self.homes[0], "candidate": self.homes[1]},
                "mean": self.means().to_json(),
                "weighted_mean": None if weighted is None else weighted.to_json(),
                "band_changes": {"up": changes.up, "same": changes.same, "down": changes.down},
                "most_changed": [q.to_json() for q in self.most_changed(top)],
                "queries": [self.query(i).to_json() for i in range(self.shared)]}
