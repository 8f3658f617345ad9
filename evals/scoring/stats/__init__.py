"""Statistics for comparing runs, judging relevance estimates and judges' agreement."""

from searchtrace.evals.scoring.stats.agreement import Level, cohen_kappa, fleiss_kappa, krippendorff_alpha
from searchtrace.evals.scoring.stats.correlation import kendall_tau
from searchtrace.evals.scoring.stats.reliability import (
    RiskCoverage,
    auroc,
    brier_score,
    expected_calibration_error,
    risk_coverage,
)
from searchtrace.evals.scoring.stats.significance import (
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
    "Level",
    "RiskCoverage",
    "auroc",
    "brier",
    "brier_score",
    "cohen_kappa",
    "ece",
    "expected_calibration_error",
    "fleiss_kappa",
    "holm",
    "kendall_tau",
    "krippendorff_alpha",
    "paired_bootstrap_ci",
    "paired_t_test",
    "randomization_test",
    "risk_coverage",
]
