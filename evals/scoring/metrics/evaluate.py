"""Score a run against qrels: per-query values and means for each metric."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from searchtrace.errors import ValidationError
from searchtrace.evals.scoring.metrics.metric import DEFAULT_METRICS, Metric, MetricName, parse_metrics
from searchtrace.evals.scoring.metrics.ranking import build_ranking
from searchtrace.evals.scoring.metrics.rules import QueryRules
from searchtrace.evals.scoring.rankings import Qrels, Run

__all__ = ["Evaluation", "evaluate"]


@dataclass(frozen=True, eq=False)
class Evaluation:
    """Per-query metric values over the queries with a relevant judgment.

    Attributes:
        query_ids: evaluated query ids, in qrels order.
        per_query: each metric's values, aligned with ``query_ids``.
        means: each metric's mean over ``query_ids`` (NaN when there are none).
        retrieved: whether the run had any result for each query.
    """

    query_ids: np.ndarray
    per_query: Mapping[Metric, np.ndarray]
    means: Mapping[Metric, float]
    retrieved: np.ndarray

    @classmethod
    def from_arrays(cls, query_ids: Iterable[str], per_query: Mapping[Metric | str, Iterable[float]]) -> Evaluation:
        """Build from plain values, e.g. a stored evaluation (all queries counted as retrieved)."""
        ids = np.array(list(query_ids), dtype=object)
        values = {Metric.parse(m): np.asarray(list(v), dtype=np.float64) for m, v in per_query.items()}
        return _evaluation(ids, values, np.ones(len(ids), dtype=bool))

    @property
    def metrics(self) -> tuple[Metric, ...]:
        return tuple(self.per_query)

    def __getitem__(self, metric: Metric | str) -> np.ndarray:
        return self.per_query[Metric.parse(metric)]

    def mean(self, metric: Metric | str) -> float:
        return self.means[Metric.parse(metric)]


def _evaluation(query_ids: np.ndarray, per_query: dict[Metric, np.ndarray], retrieved: np.ndarray) -> Evaluation:
    for values in per_query.values():
        if values.shape != query_ids.shape:
            raise ValidationError(f"every metric needs one value per query ({len(query_ids)})", field="per_query")
        values.setflags(write=False)
    means = {m: float(v.mean()) if len(v) else float("nan") for m, v in per_query.items()}
    query_ids.setflags(write=False)
    retrieved.setflags(write=False)
    return Evaluation(query_ids, MappingProxyType(per_query), MappingProxyType(means), retrieved)


def _depths(metrics: tuple[Metric, ...]) -> tuple[int | None, int | None]:
    """Ranks and ideal grades the metrics read (None: all)."""
    ks = [m.k for m in metrics]
    depth = None if None in ks else max((k for k in ks if k is not None), default=0)
    ideal = [m.k for m in metrics if m.name in (MetricName.NDCG, MetricName.NDCG_MIN, MetricName.NDCG_MAX)]
    return depth, (None if None in ideal else max((k for k in ideal if k is not None), default=0))


def evaluate(qrels: Qrels, run: Run, metrics: Iterable[Metric | str] = DEFAULT_METRICS,
             rules: QueryRules | None = None) -> Evaluation:
    """Score ``run`` against ``qrels`` with trec_eval's conventions (see :mod:`evals.metrics`).

    ``rules`` choose the queries scored (default: searchtrace's; ``QueryRules.trec_eval()``
    reproduces trec_eval).

    Raises:
        ValidationError: an unknown or malformed metric.
    """
    parsed = parse_metrics(metrics)
    depth, ideal_depth = _depths(parsed)
    query_ids, retrieved, ranking = build_ranking(qrels, run, depth, ideal_depth, rules)
    return _evaluation(query_ids, {m: m(ranking) for m in parsed}, retrieved)
