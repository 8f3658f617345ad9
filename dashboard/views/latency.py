"""Latency: an eval run's per-stage distributions and percentiles across runs, or live traffic over a window."""

import streamlit as st

from searchtrace.dashboard.data import skipped_stages, stage_percentiles
from searchtrace.dashboard.ui import cached, charts, context
from searchtrace.dashboard.ui.text import MS_FORMAT, md
from searchtrace.dashboard.ui.traffic_parts import show_traffic

EVALS, SERVED = "eval runs", "served traffic"

st.title("Latency")
home = context.home()
runs = cached.list_runs(home)
view = st.segmented_control("View", [EVALS, SERVED], default=EVALS if not runs.empty else SERVED,
                            key="latency-view", help="served traffic: searches and requests of every source but "
                                                     "eval runs (http, mcp, cli, python)") or EVALS
if view == SERVED:
    show_traffic(home)
    st.stop()
if runs.empty:
    st.info("No completed runs yet: the served traffic view shows live searches.")
    st.stop()

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
