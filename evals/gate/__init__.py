"""Regression gate: rules per metric over a comparison, verdicts, CI reports.

Exit codes (:class:`ExitCode`): 0 pass, 1 regression, 2 invalid input.
"""

from evals.gate.check import ExitCode, GateResult, RuleResult, gate
from evals.gate.config import DEFAULT_CONFIG, GateConfig, Rule, SignificanceTest, load_config
from evals.gate.report import to_junit, to_markdown, write_junit

__all__ = [
    "DEFAULT_CONFIG",
    "ExitCode",
    "GateConfig",
    "GateResult",
    "Rule",
    "RuleResult",
    "SignificanceTest",
    "gate",
    "load_config",
    "to_junit",
    "to_markdown",
    "write_junit",
]
