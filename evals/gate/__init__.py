"""Regression gate: rules per metric over a comparison, verdicts, CI reports.

Exit codes (:class:`searchtrace.errors.ExitCode`): 0 pass, 1 regression, 2 invalid input.
"""

from searchtrace.evals.gate.check import GateResult, RuleResult, gate
from searchtrace.evals.gate.config import DEFAULT_CONFIG, GateConfig, Rule, SignificanceTest, load_config
from searchtrace.evals.gate.report import to_junit, to_markdown, to_text, write_junit

__all__ = [
    "DEFAULT_CONFIG",
    "GateConfig",
    "GateResult",
    "Rule",
    "RuleResult",
    "SignificanceTest",
    "gate",
    "load_config",
    "to_junit",
    "to_markdown",
    "to_text",
    "write_junit",
]
