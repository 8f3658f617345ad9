"""Metrics as hashable values with canonical strings, and the kernel registry.

A :class:`Metric` is a name from :class:`MetricName` and an optional cutoff
``k``; ``str(Metric.parse("NDCG@10")) == "ndcg@10"``. :data:`REGISTRY` maps
each name to its array kernel and cutoff rule: ``ndcg``, ``map``, ``mrr`` and
``recall`` without ``@k`` run to full depth, ``precision``, ``hit`` and ``judged``
need a cutoff, ``rprec`` and ``bpref`` take none.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from searchtrace.errors import ValidationError
from searchtrace.evals.scoring.metrics.average_precision import average_precision
from searchtrace.evals.scoring.metrics.judged import bpref, judged
from searchtrace.evals.scoring.metrics.ndcg import ndcg
from searchtrace.evals.scoring.metrics.ndcg_bounds import ndcg_max, ndcg_min
from searchtrace.evals.scoring.metrics.precision import precision, r_precision
from searchtrace.evals.scoring.metrics.ranking import Ranking
from searchtrace.evals.scoring.metrics.recall import hit, recall
from searchtrace.evals.scoring.metrics.reciprocal_rank import reciprocal_rank

__all__ = ["COVERAGE_K", "DEFAULT_METRICS", "REGISTRY", "Cutoff", "Metric", "MetricName", "MetricSpec",
           "coverage_metrics", "is_coverage", "parse_metrics"]

Kernel = Callable[[Ranking, "int | None"], np.ndarray]


class MetricName(str, enum.Enum):
    """Metric families; the value is the canonical spelling."""

    NDCG = "ndcg"
    MAP = "map"
    MRR = "mrr"
    RECALL = "recall"
    PRECISION = "precision"
    HIT = "hit"
    RPREC = "rprec"
    JUDGED = "judged"
    NDCG_MIN = "ndcg_min"
    NDCG_MAX = "ndcg_max"
    BPREF = "bpref"


class Cutoff(enum.Enum):
    """Whether a metric takes ``@k``."""

    OPTIONAL = "optional"
    REQUIRED = "required"
    NONE = "none"


@dataclass(frozen=True)
class MetricSpec:
    """A family's kernel, cutoff rule and trec_eval name (``{k}`` for the cutoff)."""

    kernel: Kernel
    cutoff: Cutoff
    trec_eval: str
    trec_eval_full: str | None = None


REGISTRY = MappingProxyType(
    {
        MetricName.NDCG: MetricSpec(ndcg, Cutoff.OPTIONAL, "ndcg_cut_{k}", "ndcg"),
        MetricName.MAP: MetricSpec(average_precision, Cutoff.OPTIONAL, "map_cut_{k}", "map"),
        MetricName.MRR: MetricSpec(reciprocal_rank, Cutoff.OPTIONAL, "", "recip_rank"),
        MetricName.RECALL: MetricSpec(recall, Cutoff.OPTIONAL, "recall_{k}", "set_recall"),
        MetricName.PRECISION: MetricSpec(precision, Cutoff.REQUIRED, "P_{k}"),
        MetricName.HIT: MetricSpec(hit, Cutoff.REQUIRED, "success_{k}"),
        MetricName.RPREC: MetricSpec(r_precision, Cutoff.NONE, "", "Rprec"),
        MetricName.JUDGED: MetricSpec(judged, Cutoff.REQUIRED, ""),
        MetricName.NDCG_MIN: MetricSpec(ndcg_min, Cutoff.REQUIRED, ""),
        MetricName.NDCG_MAX: MetricSpec(ndcg_max, Cutoff.REQUIRED, ""),
        MetricName.BPREF: MetricSpec(bpref, Cutoff.NONE, "", "bpref"),
    }
)

_SYNTAX = re.compile(r"\s*([A-Za-z_]+)\s*(?:@\s*(\d+))?\s*")
_ALLOWED = ", ".join(
    f"{name.value}@k" if spec.cutoff is Cutoff.REQUIRED
    else name.value if spec.cutoff is Cutoff.NONE
    else f"{name.value}[@k]"
    for name, spec in REGISTRY.items()
)


def _metric_name(name: object) -> MetricName:
    try:
        return MetricName(name)
    except ValueError:
        raise ValidationError(f"unknown metric {name!r}; allowed: {_ALLOWED}", field="metric") from None


@dataclass(frozen=True, repr=False)
class Metric:
    """A metric family and its cutoff; ``k=None`` means full depth."""

    name: MetricName
    k: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", _metric_name(self.name))  # also accepts the name as a string
        cutoff = REGISTRY[self.name].cutoff
        if self.k is not None and (isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1):
            message = f"cutoff of {self.name.value} must be a positive integer, got {self.k!r}"
            raise ValidationError(message, field="metric")
        if cutoff is Cutoff.REQUIRED and self.k is None:
            raise ValidationError(f"{self.name.value} needs a cutoff, e.g. {self.name.value}@10", field="metric")
        if cutoff is Cutoff.NONE and self.k is not None:
            raise ValidationError(f"{self.name.value} takes no cutoff", field="metric")

    @classmethod
    def parse(cls, text: str | Metric) -> Metric:
        """Parse ``"name"`` or ``"name@k"`` (case-insensitive, spaces ignored)."""
        if isinstance(text, Metric):
            return text
        match = _SYNTAX.fullmatch(text) if isinstance(text, str) else None
        if match is None:
            raise ValidationError(f"cannot parse metric {text!r}; allowed: {_ALLOWED}", field="metric")
        name, k = match.groups()
        return cls(_metric_name(name.lower()), None if k is None else int(k))

    @property
    def spec(self) -> MetricSpec:
        return REGISTRY[self.name]

    @property
    def trec_eval(self) -> str | None:
        """The equivalent trec_eval / pytrec_eval measure, or None if it has none."""
        spec = self.spec
        name = spec.trec_eval_full if self.k is None else spec.trec_eval.format(k=self.k)
        return name or None

    def __call__(self, ranking: Ranking) -> np.ndarray:
        """Per-query values of this metric over ``ranking``."""
        return self.spec.kernel(ranking, self.k)

    def __str__(self) -> str:
        return self.name.value if self.k is None else f"{self.name.value}@{self.k}"

    def __repr__(self) -> str:
        return f"Metric.parse({str(self)!r})"


def parse_metrics(metrics: Iterable[str | Metric]) -> tuple[Metric, ...]:
    """Parse each metric; duplicates are dropped, order kept."""
    if isinstance(metrics, (str, Metric)):
        metrics = [metrics]
    return tuple(dict.fromkeys(Metric.parse(m) for m in metrics))


DEFAULT_METRICS: tuple[Metric, ...] = parse_metrics(
    ["ndcg@10", "recall@5", "recall@100", "mrr@10", "map@100", "precision@10", "hit@10"]
)


COVERAGE_K = 10
"""The cutoff whose Judged@k a run always records and the gate's coverage floor reads."""


def coverage_metrics(metrics: Iterable[str | Metric]) -> tuple[Metric, ...]:
    """``judged@k`` for :data:`COVERAGE_K` and for each cutoff of ``metrics`` (ascending): how much of each
    reported top k rests on judged documents; and ``ndcg_min@k`` and ``ndcg_max@k`` for each ``ndcg@k``: the least
    and the greatest nDCG@k any grading of the unjudged documents of its top k would give."""
    parsed = [m for m in parse_metrics(metrics) if not is_coverage(m)]
    ks = {COVERAGE_K} | {m.k for m in parsed if m.k is not None}
    upper = sorted({m.k for m in parsed if m.name is MetricName.NDCG and m.k is not None})
    bounds = (Metric(name, k) for k in upper for name in (MetricName.NDCG_MIN, MetricName.NDCG_MAX))
    return (*(Metric(MetricName.JUDGED, k) for k in sorted(ks)), *bounds)


def is_coverage(metric: str | Metric) -> bool:
    """Whether ``metric`` measures the labels' reach (``judged@k``, ``ndcg_min@k``, ``ndcg_max@k``), not the
    ranking: shown beside the quality metrics, never compared or gated as one."""
    return Metric.parse(metric).name in (MetricName.JUDGED, MetricName.NDCG_MIN, MetricName.NDCG_MAX)
