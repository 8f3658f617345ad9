"""searchtrace evals: runs and qrels, metrics, statistics, comparison, the gate, calibration, run folders.

This is the package's public API: the dashboard (and users) import these names
and nothing else of it. Names load their module on first use, so
``import searchtrace.evals`` stays cheap (no scipy, sklearn or pandas).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchtrace._lazy import exports

if TYPE_CHECKING:
    from searchtrace.evals.calibration import fit_isotonic, fit_logistic
    from searchtrace.evals.comparison import TIE, Comparison, MetricComparison, QueryDelta, compare
    from searchtrace.evals.execution import run_eval
    from searchtrace.evals.gate import GateConfig, GateResult, load_config
    from searchtrace.evals.metrics import (
        DEFAULT_METRICS,
        Evaluation,
        Metric,
        MetricName,
        QueryRules,
        evaluate,
        parse_metrics,
    )
    from searchtrace.evals.naming import RunLabel, default_run_name, run_settings, settings_diff, show_setting
    from searchtrace.evals.rankings import Qrels, Run
    from searchtrace.evals.runfolder import (
        FORMAT_VERSION,
        Abstention,
        Attribution,
        BandPrecision,
        ConfidenceReport,
        CorrectiveOutcome,
        CorrectiveReport,
        DatasetInfo,
        EvalSettings,
        ExternalRun,
        JournalRecord,
        Percentiles,
        QueryOutcome,
        RankedResult,
        RetrieverInfo,
        RetryAttempt,
        RunFolder,
        RunSummary,
        Timings,
        feature_column,
        latency_column,
        latency_stage,
    )
    from searchtrace.evals.stats import RiskCoverage, risk_coverage
    from searchtrace.evals.trec import read_qrels, read_run, write_run

_EXPORTS = {
    "fit_isotonic": "searchtrace.evals.calibration",
    "fit_logistic": "searchtrace.evals.calibration",
    "Comparison": "searchtrace.evals.comparison",
    "MetricComparison": "searchtrace.evals.comparison",
    "QueryDelta": "searchtrace.evals.comparison",
    "TIE": "searchtrace.evals.comparison",
    "compare": "searchtrace.evals.comparison",
    "GateConfig": "searchtrace.evals.gate",
    "GateResult": "searchtrace.evals.gate",
    "load_config": "searchtrace.evals.gate",
    "DEFAULT_METRICS": "searchtrace.evals.metrics",
    "Evaluation": "searchtrace.evals.metrics",
    "Metric": "searchtrace.evals.metrics",
    "MetricName": "searchtrace.evals.metrics",
    "evaluate": "searchtrace.evals.metrics",
    "parse_metrics": "searchtrace.evals.metrics",
    "QueryRules": "searchtrace.evals.metrics",
    "run_eval": "searchtrace.evals.execution",
    "Abstention": "searchtrace.evals.runfolder",
    "Attribution": "searchtrace.evals.runfolder",
    "BandPrecision": "searchtrace.evals.runfolder",
    "ConfidenceReport": "searchtrace.evals.runfolder",
    "CorrectiveOutcome": "searchtrace.evals.runfolder",
    "CorrectiveReport": "searchtrace.evals.runfolder",
    "DatasetInfo": "searchtrace.evals.runfolder",
    "EvalSettings": "searchtrace.evals.runfolder",
    "ExternalRun": "searchtrace.evals.runfolder",
    "FORMAT_VERSION": "searchtrace.evals.runfolder",
    "JournalRecord": "searchtrace.evals.runfolder",
    "Percentiles": "searchtrace.evals.runfolder",
    "QueryOutcome": "searchtrace.evals.runfolder",
    "RankedResult": "searchtrace.evals.runfolder",
    "RetrieverInfo": "searchtrace.evals.runfolder",
    "RetryAttempt": "searchtrace.evals.runfolder",
    "RunFolder": "searchtrace.evals.runfolder",
    "RunSummary": "searchtrace.evals.runfolder",
    "Timings": "searchtrace.evals.runfolder",
    "feature_column": "searchtrace.evals.runfolder",
    "latency_column": "searchtrace.evals.runfolder",
    "latency_stage": "searchtrace.evals.runfolder",
    "RunLabel": "searchtrace.evals.naming",
    "default_run_name": "searchtrace.evals.naming",
    "run_settings": "searchtrace.evals.naming",
    "settings_diff": "searchtrace.evals.naming",
    "show_setting": "searchtrace.evals.naming",
    "Qrels": "searchtrace.evals.rankings",
    "Run": "searchtrace.evals.rankings",
    "RiskCoverage": "searchtrace.evals.stats",
    "risk_coverage": "searchtrace.evals.stats",
    "read_qrels": "searchtrace.evals.trec",
    "read_run": "searchtrace.evals.trec",
    "write_run": "searchtrace.evals.trec",
}

__all__ = [
    "Abstention",
    "Attribution",
    "BandPrecision",
    "Comparison",
    "ConfidenceReport",
    "CorrectiveOutcome",
    "CorrectiveReport",
    "DEFAULT_METRICS",
    "DatasetInfo",
    "EvalSettings",
    "Evaluation",
    "ExternalRun",
    "FORMAT_VERSION",
    "GateConfig",
    "GateResult",
    "JournalRecord",
    "Metric",
    "MetricComparison",
    "MetricName",
    "Percentiles",
    "Qrels",
    "QueryDelta",
    "QueryRules",
    "QueryOutcome",
    "RankedResult",
    "RetrieverInfo",
    "RetryAttempt",
    "RiskCoverage",
    "Run",
    "RunFolder",
    "RunLabel",
    "RunSummary",
    "TIE",
    "Timings",
    "compare",
    "default_run_name",
    "evaluate",
    "feature_column",
    "fit_isotonic",
    "fit_logistic",
    "latency_column",
    "latency_stage",
    "load_config",
    "parse_metrics",
    "read_qrels",
    "read_run",
    "risk_coverage",
    "run_eval",
    "run_settings",
    "settings_diff",
    "show_setting",
    "write_run",
]
__getattr__, __dir__ = exports(__name__, _EXPORTS)
