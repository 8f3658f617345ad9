""":mod:`dashboard.data` behind ``st.cache_data``: a page rerun re-reads nothing younger than :data:`TTL_S`."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from searchtrace.dashboard import data

__all__ = ["TTL_S", "calibration", "compare_metrics", "compare_runs", "count_traces", "dataset_folders", "latency_by_run", "list_runs", "list_traces",
           "load_run", "overlap_runs", "per_query", "query_texts", "query_across_runs", "run_deltas", "query_run", "settings_table", "side_by_side", "stage_latency", "traffic", "trend",
           "waterfall"]

TTL_S = 30  # runs and traces keep arriving; a table is at most this stale
_cached = st.cache_data(ttl=TTL_S, show_spinner=False, max_entries=128)

calibration = _cached(data.calibration)
compare_runs = _cached(data.compare_runs)
count_traces = _cached(data.count_traces)
dataset_folders = _cached(data.dataset_folders)
latency_by_run = _cached(data.latency_by_run)
gold_ranks_across = _cached(data.gold_ranks_across)
list_runs = _cached(data.list_runs)
#: A pair of completed runs compares the same until one is deleted: kept an hour, not :data:`TTL_S`.
compare_metrics = st.cache_data(ttl=3600, show_spinner=False, max_entries=1024)(data.compare_metrics)


def run_deltas(home: Path, runs: pd.DataFrame, metric: str) -> pd.DataFrame:
    """:func:`dashboard.data.run_deltas` with each pair's comparison cached (:data:`compare_metrics`)."""
    return data.run_deltas(home, runs, metric, compared=compare_metrics)
list_traces = _cached(data.list_traces)
per_query = _cached(data.per_query)
query_across_runs = _cached(data.query_across_runs)
query_run = _cached(data.query_run)
settings_table = _cached(data.settings_table)
load_run = _cached(data.load_run)
overlap_runs = _cached(data.overlap_runs)
query_texts = _cached(data.query_texts)
side_by_side = _cached(data.side_by_side)
stage_latency = _cached(data.stage_latency)
traffic = _cached(data.traffic)
trend = _cached(data.trend)
waterfall = _cached(data.waterfall)
