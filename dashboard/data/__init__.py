"""The dashboard's data access: pure functions over run folders and the trace store (no Streamlit).

Each takes the home folder first and returns DataFrames or frozen records, so
pages only lay out and tests need no browser.
"""

from searchtrace.dashboard.data.calibration import Calibration, calibration
from searchtrace.dashboard.data.compare import RunComparison, compare_runs
from searchtrace.dashboard.data.latency import latency_by_run, stage_latency, stage_percentiles
from searchtrace.dashboard.data.query import QueryRun, query_across_runs, query_run
from searchtrace.dashboard.data.runs import list_runs, load_run, metric_names, per_query, trend
from searchtrace.dashboard.data.traces import Waterfall, count_traces, list_traces, waterfall

__all__ = [
    "Calibration",
    "QueryRun",
    "RunComparison",
    "Waterfall",
    "calibration",
    "compare_runs",
    "count_traces",
    "latency_by_run",
    "list_runs",
    "list_traces",
    "load_run",
    "metric_names",
    "per_query",
    "query_across_runs",
    "query_run",
    "stage_latency",
    "stage_percentiles",
    "trend",
    "waterfall",
]
