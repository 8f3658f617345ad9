"""Regression gate: rules per metric over a comparison (or, for runs without labels, thresholds on rank-biased
overlap), verdicts, CI reports.

Exit codes (:class:`searchtrace.errors.ExitCode`): 0 pass, 1 regression, 2 invalid input.
"""

from searchtrace.evals.verdicts.gate.check import NO_OVERLAP_TABLE, GateResult, RuleResult, gate, gate_overlap
from searchtrace.evals.verdicts.gate.config import DEFAULT_CONFIG, GateConfig, Rule, SignificanceTest, load_config
from searchtrace.evals.verdicts.gate.overlap import OverlapCheck, OverlapRules
from searchtrace.evals.verdicts.gate.report import to_junit, to_markdown, to_text, write_junit

__all__ = [
    "DEFAULT_CONFIG",
    "NO_OVERLAP_TABLE",
    "GateConfig",
    "GateResult",
    "OverlapCheck",
    "OverlapRules",
    "Rule",
    "RuleResult",
    "SignificanceTest",
    "gate",
    "gate_overlap",
    "load_config",
    "to_junit",
    "to_markdown",
    "to_text",
    "write_junit",
]
