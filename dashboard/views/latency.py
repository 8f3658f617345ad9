"""Latency: per-stage distributions and percentiles of a run, and percentiles across runs."""

import streamlit as st

from searchtrace.dashboard.data import skipped_stages, stage_percentiles
from searchtrace.dashboard.ui import cached, charts, context
from searchtrace.dashboard.ui.text import MS_FORMAT, md

home, runs = context.runs_page("Latency")
run_id = context.select_run(runs, "Run", "latency-run")
latency = context.load(cached.stage_latency, home, run_id)
skipped = skipped_stages(context.load(cached.load_run, home, run_id))
st.subheader("Per stage")
table = stage_percentiles(latency)
table.insert(1, "skipped", table["stage"].map(lambda s: skipped.get(s, "")))
if skipped:
    st.caption("Skipped stages did not run (" + "; ".join(f"{md(k)}: {md(v)}" for k, v in skipped.items())
               + "): their time is the span's bookkeeping, not a speed-up.")
st.dataframe(table, hide_index=True, key="latency-percentiles", height=38 + 35 * len(table), column_config={
    c: st.column_config.NumberColumn(c, format=MS_FORMAT) for c in ("p50", "p90", "p95", "p99", "max", "mean")})
st.altair_chart(charts.latency_boxes(latency, skipped), width="stretch")

st.header("Across runs")
by_run = cached.latency_by_run(home)
stages = [s for s in dict.fromkeys(by_run["stage"])]
left, right = st.columns([3, 1])
picked = left.multiselect("Stages", stages, default=[s for s in ("search", "dense", "graph") if s in stages],
                          key="latency-stages")
percentile = right.selectbox("Percentile", ["p50", "p95", "p99"], index=1, key="latency-pct")
st.caption("A cross marks a run that skipped the stage; the line joins only the runs that ran it.")
st.altair_chart(charts.latency_trend(by_run[by_run["stage"].isin(picked)], percentile), width="stretch")
