"""searchtrace evals: runs and qrels, metrics, statistics, comparison (with labels, or by rank-biased overlap without
them), the gate, calibration, run folders, judgments.

This is the package's public API: the dashboard (and users) import these names
and nothing else of it. Names load their module on first use, so
``import searchtrace.evals`` stays cheap (no scipy, sklearn or pandas).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchtrace._lazy import exports

if TYPE_CHECKING:
    from searchtrace.evals.labels.implicit import (
        IMPLICIT_JUDGE,
        ClickThresholds,
        ImplicitReport,
        ReferenceAgreement,
        implicit_judgments,
    )
    from searchtrace.evals.labels.judgments import (
        ADJUDICATION,
        DEFAULT_TTL_S,
        JsonlStore,
        JudgingFolder,
        JudgingSession,
        Judgment,
        JudgmentStore,
        Kind,
        PairLabels,
        PooledPair,
        Scale,
        Tally,
        adjudicates,
        judging_status,
        pairs_of,
        read_pool,
    )
    from searchtrace.evals.labels.judgments.store.schema import JUDGMENTS_MIGRATION
    from searchtrace.evals.labels.querysets import (
        QueryOrigin,
        QuerySet,
        QuerySetInfo,
        Sampling,
        TrafficFilter,
        queries_from_traces,
        query_id,
        read_info,
    )
    from searchtrace.evals.runs.calibration import fit_isotonic, fit_logistic
    from searchtrace.evals.runs.execution import EvalInterrupted, run_eval
    from searchtrace.evals.runs.naming import RunLabel, default_run_name, run_settings, settings_diff, show_setting
    from searchtrace.evals.runs.runfolder import (
        BEST_SCORE,
        FORMAT_VERSION,
        NO_CONFIDENT,
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
        OutsideRuns,
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
        outside_runs,
    )
    from searchtrace.evals.runs.runindex.cache import cached_run
    from searchtrace.evals.runs.store.opening import open_store_index
    from searchtrace.evals.runs.store.schema import RUNS_MIGRATION
    from searchtrace.evals.runs.trec import read_qrels, read_run, write_run
    from searchtrace.evals.scoring.attribution import GoldTrace, LostAt
    from searchtrace.evals.scoring.metrics import (
        DEFAULT_METRICS,
        Evaluation,
        Metric,
        MetricName,
        QueryRules,
        evaluate,
        is_coverage,
        parse_metrics,
    )
    from searchtrace.evals.scoring.rankings import Qrels, Run
    from searchtrace.evals.scoring.stats import RiskCoverage, risk_coverage
    from searchtrace.evals.verdicts.comparability import labelled
    from searchtrace.evals.verdicts.comparison import TIE, Comparison, MetricComparison, QueryDelta, compare
    from searchtrace.evals.verdicts.gate import GateConfig, GateResult, load_config
    from searchtrace.evals.verdicts.overlap import (
        RBO,
        OverlapComparison,
        QueryOverlap,
        compare_overlap,
        jaccard,
        new_in_top,
        rbo,
    )

__getattr__, __dir__, __all__ = exports(__name__, __file__)
