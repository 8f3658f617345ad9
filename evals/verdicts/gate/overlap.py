"""The gate's label-free checks: thresholds on rank-biased overlap, for runs without labels.

::

    [overlap]
    p = 0.9                 # RBO's persistence (default 0.9)
    min_mean_rbo = 0.8      # the mean extrapolated RBO may not be lower
    floor = 0.5             # a query whose RBO is below this changed a lot ...
    max_share_below = 0.1   # ... and at most this share of the queries may
    weighted = false        # true: traffic-weighted mean and share (a query set from traffic)

``min_mean_rbo``, or ``floor`` with ``max_share_below``, or both; unknown keys
are errors. The comparison is :func:`searchtrace.evals.verdicts.overlap.compare_overlap`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from searchtrace.errors import ValidationError
from searchtrace.evals.verdicts.gate._values import Invalid, fraction, number
from searchtrace.evals.verdicts.overlap import OverlapComparison

__all__ = ["OVERLAP_KEYS", "OverlapCheck", "OverlapRules", "judge_overlap", "overlap_rules"]

OVERLAP_KEYS = ("p", "min_mean_rbo", "floor", "max_share_below", "weighted")
TABLE = "overlap"
_EPS = 1e-12  # a value equal to its limit (up to rounding) passes


@dataclass(frozen=True)
class OverlapRules:
    """The ``[overlap]`` table: ``None`` disables a check."""

    p: float = 0.9
    min_mean_rbo: float | None = None
    floor: float | None = None
    max_share_below: float | None = None
    weighted: bool = False


@dataclass(frozen=True)
class OverlapCheck:
    """One label-free check's verdict: ``value`` against ``limit``."""

    name: str
    value: float
    limit: float
    passed: bool
    reason: str


def _optional(table: dict[str, Any], key: str) -> float | None:
    return None if key not in table else fraction(table[key], key, TABLE)


def overlap_rules(table: Any) -> OverlapRules:
    """The ``[overlap]`` table's rules.

    Raises:
        Invalid: not a table, an unknown key, a bad value, no check, a floor without its share (or the reverse).
    """
    if not isinstance(table, dict):
        raise Invalid("overlap must be a table: [overlap]", key="overlap")
    unknown = sorted(set(table) - set(OVERLAP_KEYS))
    if unknown:
        raise Invalid(f"unknown key {unknown[0]!r} in [overlap]; allowed: {', '.join(OVERLAP_KEYS)}", TABLE, unknown[0])
    p = number(table.get("p", 0.9), "p", TABLE)
    if not 0 < p < 1:
        raise Invalid(f"p must be in (0, 1), got {p!r}", TABLE, "p")
    weighted = table.get("weighted", False)
    if not isinstance(weighted, bool):
        raise Invalid(f"weighted must be true or false, got {weighted!r}", TABLE, "weighted")
    rules = OverlapRules(p, _optional(table, "min_mean_rbo"), _optional(table, "floor"),
                         _optional(table, "max_share_below"), weighted)
    if (rules.floor is None) != (rules.max_share_below is None):
        raise Invalid("floor and max_share_below go together: a share of queries under a floor",
                      TABLE, "floor" if rules.floor is not None else "max_share_below")
    if rules.min_mean_rbo is None and rules.floor is None:
        raise Invalid("[overlap] checks nothing: add min_mean_rbo, or floor with max_share_below", TABLE)
    return rules


def judge_overlap(comparison: OverlapComparison, rules: OverlapRules) -> tuple[OverlapCheck, ...]:
    """Each configured check's verdict on ``comparison`` (which must have RBO at ``rules.p``).

    Raises:
        ValidationError: ``weighted`` rules for queries that carry no traffic weights (exit code 2).
    """
    if rules.weighted and comparison.weights is None:
        raise ValidationError("[overlap] weighted = true needs a query set from traffic (queries with count and "
                              "inclusion probability); these runs' queries have none", field="weighted")
    means = comparison.weighted_means() if rules.weighted else comparison.means()
    kind, p = "traffic-weighted " if rules.weighted else "", rules.p
    checks = []
    if rules.min_mean_rbo is not None and means is not None:
        mean = means.rbo[comparison.ps.index(p)].ext
        ok = mean >= rules.min_mean_rbo - _EPS
        said = f">= minimum {rules.min_mean_rbo:g}" if ok else f"is below the minimum {rules.min_mean_rbo:g}"
        checks.append(OverlapCheck(f"mean RBO p={p:g}", mean, rules.min_mean_rbo, ok, f"{kind}mean {mean:.4f} {said}"))
    if rules.floor is not None and rules.max_share_below is not None:
        share = comparison.share_below(p, rules.floor, rules.weighted)
        count = int((comparison.ext(p) < rules.floor).sum())
        ok = share <= rules.max_share_below + _EPS
        said = "within" if ok else "over"
        checks.append(OverlapCheck(f"share RBO<{rules.floor:g}", share, rules.max_share_below, ok,
                                   f"{count} of {comparison.shared} queries under RBO {rules.floor:g} at p={p:g}: "
                                   f"{kind}share {share:.4f}, {said} max_share_below {rules.max_share_below:g}"))
    return tuple(checks)
