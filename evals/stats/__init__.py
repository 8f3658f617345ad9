"""Statistics for comparing runs and judging relevance estimates."""

from searchtrace.evals.stats.correlation import kendall_tau
from searchtrace.evals.stats.reliability import (
    RiskCoverage,
    auroc,
    brier_score,
    expected_calibration_error,
    risk_coverage,
)
from searchtrace.evals.stats.significance import (
    ConfidenceInterval,
    holm,
    paired_bootstrap_ci,
    paired_t_test,
    randomization_test,
)

# Short names, as used by the eval report.
ece = expected_calibration_error
brier = brier_score

__all__ = [
    "ConfidenceInterval",
    "RiskCoverage",
    "auroc",
    "brier",
    "brier_score",
    "ece",
    "expected_calibration_error",
    "holm",
    "kendall_tau",
    "paired_bootstrap_ci",
    "paired_t_test",
    "randomization_test",
    "risk_coverage",
]
