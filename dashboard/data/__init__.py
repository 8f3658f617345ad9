"""The dashboard's data access: pure functions over run folders and the trace store (no Streamlit).

Each takes the home folder first and returns DataFrames or frozen records, so
pages only lay out and tests need no browser.
"""

from searchtrace.dashboard.data.baselines import baselines, forest_rows, p_text, run_deltas, run_order, verdict
from searchtrace.dashboard.data.calibration import Calibration, calibration
from searchtrace.dashboard.data.compare import RunComparison, compare_metrics, compare_runs
from searchtrace.dashboard.data.documents import documents, find_queries, query_texts
from searchtrace.dashboard.data.judging import (
    PairView,
    Progress,
    Queue,
    dataset_folders,
    dataset_label,
    disagreements,
    highlight,
    pair_view,
    progress,
    queue,
)
from searchtrace.dashboard.data.latency import latency_by_run, stage_latency, stage_percentiles
from searchtrace.dashboard.data.overlap import OverlapView, overlap_runs
from searchtrace.dashboard.data.query import (
    QueryRun,
    SideBySide,
    gold_ranks_across,
    query_across_runs,
    query_run,
    side_by_side,
)
from searchtrace.dashboard.data.runs import (
    damaged_runs,
    differing_settings,
    gone_runs,
    list_runs,
    load_run,
    metric_names,
    per_query,
    settings_table,
    skipped_stages,
    trend,
)
from searchtrace.dashboard.data.shared import shared_store, store_problem
from searchtrace.dashboard.data.trace_presets import PRESETS, TIME_RANGES, Preset, range_start
from searchtrace.dashboard.data.traces import (
    COUNT_LIMIT,
    KINDS,
    SEARCHES,
    Waterfall,
    count_traces,
    list_traces,
    span_documents,
    waterfall,
)
from searchtrace.dashboard.data.traffic import WINDOWS, Traffic, since_for, traffic

__all__ = [
    "COUNT_LIMIT",
    "KINDS",
    "PRESETS",
    "SEARCHES",
    "TIME_RANGES",
    "WINDOWS",
    "Calibration",
    "OverlapView",
    "PairView",
    "Progress",
    "QueryRun",
    "Preset",
    "Queue",
    "RunComparison",
    "SideBySide",
    "Traffic",
    "Waterfall",
    "baselines",
    "calibration",
    "compare_metrics",
    "compare_runs",
    "count_traces",
    "damaged_runs",
    "gone_runs",
    "dataset_folders",
    "dataset_label",
    "differing_settings",
    "disagreements",
    "documents",
    "find_queries",
    "forest_rows",
    "gold_ranks_across",
    "highlight",
    "latency_by_run",
    "list_runs",
    "list_traces",
    "load_run",
    "metric_names",
    "overlap_runs",
    "p_text",
    "pair_view",
    "per_query",
    "progress",
    "query_across_runs",
    "query_run",
    "query_texts",
    "queue",
    "run_deltas",
    "run_order",
    "range_start",
    "settings_table",
    "shared_store",
    "side_by_side",
    "since_for",
    "skipped_stages",
    "span_documents",
    "stage_latency",
    "stage_percentiles",
    "store_problem",
    "traffic",
    "trend",
    "verdict",
    "waterfall",
]
