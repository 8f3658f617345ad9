"""Runs: every run with its headline metrics, and a metric's trend per dataset."""

import streamlit as st

from searchtrace.dashboard.data import metric_names
from searchtrace.dashboard.ui import cached, charts, context

st.title("Runs")
home = context.home()
runs = cached.list_runs(home)
if runs.empty:
    st.info(f"No completed runs in `{home / 'runs'}` yet: `searchtrace eval DATASET --home {home}` writes one.")
    st.stop()

metrics = metric_names(runs)
left, right = st.columns(2)
datasets = sorted(runs["dataset"].dropna().unique())
dataset = left.selectbox("Dataset", ["all", *datasets], key="runs-dataset")
modes = sorted(runs["mode"].dropna().unique())
mode = right.selectbox("Mode", ["all", *modes], key="runs-mode")
shown = runs[((runs["dataset"] == dataset) | (dataset == "all")) & ((runs["mode"] == mode) | (mode == "all"))]
st.caption(f"{len(shown)} of {len(runs)} runs, newest first; click a column header to sort.")
st.dataframe(
    shown.drop(columns=["fingerprint"]), hide_index=True, key="runs-table",
    column_config={"created_at": st.column_config.DatetimeColumn("date", format="YYYY-MM-DD HH:mm"),
                   **{m: st.column_config.NumberColumn(m, format="%.4f") for m in metrics}})

st.header("Trend")
left, right = st.columns(2)
trend_dataset = left.selectbox("Dataset", datasets, key="trend-dataset",
                               index=datasets.index(dataset) if dataset in datasets else 0)
metric = right.selectbox("Metric", metrics, key="trend-metric",
                         index=metrics.index("ndcg@10") if "ndcg@10" in metrics else 0)
points = cached.trend(home, trend_dataset, metric)
st.altair_chart(charts.trend(points, metric), width="stretch")
