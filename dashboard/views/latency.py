"""Latency: an eval run's per-stage distributions and percentiles across runs, or live traffic over a window."""

import streamlit as st

from searchtrace.dashboard.data import skipped_stages, stage_percentiles
from searchtrace.dashboard.ui import cached, charts, context
from searchtrace.dashboard.ui.text import MS_FORMAT, md, show_table
from searchtrace.dashboard.ui.traffic_parts import TRAFFIC_PARAMS, show_traffic
from searchtrace.dashboard.ui.url_state import drop_params, url_multiselect, url_segmented, url_selectbox

EVALS, SERVED = "eval runs", "served traffic"
EVAL_PARAMS = ("run", "stages", "pct")  # what the eval view keeps in the URL

st.title("Latency")
VIEW = ("view", *EVAL_PARAMS, *TRAFFIC_PARAMS)
if context.restore("latency", VIEW):
    st.caption("The view shown last in this session (the link named none).")
home = context.home()
runs = cached.list_runs(home)
view = url_segmented(st, "View", [EVALS, SERVED], default=EVALS if not runs.empty else SERVED, key="latency-view",
                     param="view", help="served traffic: searches and requests of every source but eval runs "
                                        "(http, mcp, cli, python)")
drop_params(*(EVAL_PARAMS if view == SERVED else TRAFFIC_PARAMS))  # the other view's
if view == SERVED:
    show_traffic(home)
    context.remember("latency", VIEW)
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
show_table(st, table, hide_index=True, key="latency-percentiles", height=38 + 35 * len(table), column_config={
    c: st.column_config.NumberColumn(c, format=MS_FORMAT) for c in ("p50", "p90", "p95", "p99", "max", "mean")})
st.altair_chart(charts.latency_boxes(latency, skipped), width="stretch")

st.header("Across runs")
by_run = cached.latency_by_run(home)
stages = [s for s in dict.fromkeys(by_run["stage"])]
left, right = st.columns([3, 1])
picked = url_multiselect(left, "Stages", stages, key="latency-stages", param="stages",
                         default=[s for s in ("search", "dense", "graph") if s in stages])
percentile = url_selectbox(right, "Percentile", ["p50", "p95", "p99"], key="latency-pct", param="pct",
                           default="p95")
context.remember("latency", VIEW)
st.caption("A cross marks a run that skipped the stage; the line joins only the runs that ran it.")
st.altair_chart(charts.latency_trend(by_run[by_run["stage"].isin(picked)], percentile), width="stretch")
