"""Latency: per-stage distributions and percentiles of a run, and percentiles across runs."""

import streamlit as st

from searchtrace.dashboard.data import stage_percentiles
from searchtrace.dashboard.ui import cached, charts, context

home, runs = context.runs_page("Latency")
run_id = context.select_run(runs, "Run", "latency-run")
latency = context.load(cached.stage_latency, home, run_id)
st.subheader("Per stage")
st.dataframe(stage_percentiles(latency), hide_index=True, key="latency-percentiles", column_config={
    c: st.column_config.NumberColumn(c, format="%.3f") for c in ("p50", "p90", "p95", "p99", "max", "mean")})
st.altair_chart(charts.latency_boxes(latency), width="stretch")

st.header("Across runs")
by_run = cached.latency_by_run(home)
stages = [s for s in dict.fromkeys(by_run["stage"])]
left, right = st.columns([3, 1])
picked = left.multiselect("Stages", stages, default=[s for s in ("search", "dense", "graph") if s in stages],
                          key="latency-stages")
percentile = right.selectbox("Percentile", ["p50", "p95", "p99"], index=1, key="latency-pct")
st.altair_chart(charts.latency_trend(by_run[by_run["stage"].isin(picked)], percentile), width="stretch")
