"""Apply gate rules to a comparison: metric rules to runs with labels, the ``[overlap]`` checks to runs without."""

from __future__ import annotations

import math
from dataclasses import dataclass

from searchtrace.errors import ExitCode, ValidationError
from searchtrace.evals.verdicts.comparison import Comparison, MetricComparison
from searchtrace.evals.verdicts.gate.config import DEFAULT_CONFIG, GateConfig, Rule, SignificanceTest
from searchtrace.evals.verdicts.gate.overlap import OverlapCheck, judge_overlap
from searchtrace.evals.verdicts.overlap import OverlapComparison
from searchtrace.terminal import signed

__all__ = ["GateResult", "RuleResult", "gate", "gate_overlap"]

_EPS = 1e-12  # a drop equal to max_drop (up to rounding) is allowed

NO_OVERLAP_TABLE = ("runs without labels are gated by the config's [overlap] table, and it has none: pass "
                    "--config FILE with one, e.g. [overlap] min_mean_rbo = 0.8")
"""Why a gate without label-free checks cannot judge runs without labels, and the fix."""


@dataclass(frozen=True)
class RuleResult:
    """One rule's verdict; ``p_value`` is the Holm-corrected p of the configured test."""

    rule: Rule
    passed: bool
    reason: str
    base: float
    candidate: float
    delta: float
    p_value: float


@dataclass(frozen=True)
class GateResult:
    """Every rule's verdict (``results``: metric rules; ``overlap``: the label-free checks); the gate passes
    when all do."""

    results: tuple[RuleResult, ...]
    config: GateConfig
    overlap: tuple[OverlapCheck, ...] = ()

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results) and all(c.passed for c in self.overlap)

    @property
    def exit_code(self) -> ExitCode:
        """``OK`` when every rule passed, else ``FAILURE`` (a regression)."""
        return ExitCode.OK if self.passed else ExitCode.FAILURE


def _p(item: MetricComparison, test: SignificanceTest) -> float:
    return item.p_randomization_holm if test is SignificanceTest.RANDOMIZATION else item.p_t_test_holm


def _judge(rule: Rule, item: MetricComparison, config: GateConfig) -> RuleResult:
    failures, notes = [], []
    if rule.min_value is not None:
        if math.isnan(item.candidate_mean) or item.candidate_mean < rule.min_value:
            failures.append(f"{item.candidate_mean:.4f} is below the minimum {rule.min_value:g}")
        else:
            notes.append(f"{item.candidate_mean:.4f} >= minimum {rule.min_value:g}")
    p = _p(item, config.test)
    if rule.max_drop is not None:
        failed, text = _drop(rule.max_drop, rule.require_significance, item.delta, p, config.alpha)
        (failures if failed else notes).append(text)
    reason = "; ".join(failures or notes) or "no checks configured"
    return RuleResult(rule, not failures, reason, item.base_mean, item.candidate_mean, item.delta, p)


def _drop(max_drop: float, significant_only: bool, change: float, p: float, alpha: float) -> tuple[bool, str]:
    """Whether the change (candidate - base) fails ``max_drop``, and why: a change has one sign in every report."""
    p_text = "n/a" if math.isnan(p) else f"{p:.4g}"
    said = f"change {signed(change)}"
    if not -change > max_drop + _EPS:
        return False, f"{said} within max_drop {max_drop:g}"
    if significant_only and not p < alpha:
        return False, f"{said}, a drop past max_drop {max_drop:g}, but not significant (p={p_text} >= {alpha:g})"
    significance = f"p={p_text} < {alpha:g}" if significant_only else f"p={p_text}"
    return True, f"{said}, a drop past max_drop {max_drop:g}, {significance}"


def gate(comparison: Comparison, config: GateConfig = DEFAULT_CONFIG) -> GateResult:
    """Judge ``comparison`` by ``config``'s rules.

    Raises:
        ValidationError: a rule's metric is not in the comparison (invalid
            input: exit code 2).
    """
    compared = {item.metric: item for item in comparison.metrics}
    missing = [str(r.metric) for r in config.rules if r.metric not in compared]
    if missing:
        raise ValidationError(
            f"gate rules for metrics the comparison lacks: {', '.join(missing)}; "
            f"compared: {', '.join(str(m) for m in compared) or 'none'}",
            field="metrics",
        )
    return GateResult(tuple(_judge(rule, compared[rule.metric], config) for rule in config.rules), config)


def gate_overlap(comparison: OverlapComparison, config: GateConfig) -> GateResult:
    """Judge a label-free comparison by ``config``'s ``[overlap]`` checks.

    Raises:
        ValidationError: the config has no ``[overlap]`` table, or the comparison lacks RBO at its p (invalid
            input: exit code 2).
    """
    if config.overlap is None:
        raise ValidationError(NO_OVERLAP_TABLE, field="config")
    if config.overlap.p not in comparison.ps:
        raise ValidationError(f"the comparison has no RBO at p={config.overlap.p:g} (it has "
                              f"{', '.join(f'{p:g}' for p in comparison.ps)})", field="p")
    return GateResult((), config, judge_overlap(comparison, config.overlap))
