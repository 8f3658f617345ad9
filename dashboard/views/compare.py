"""Compare: what changed between two runs (settings), which deltas are real, and which queries moved; without
labels, how their rankings differ."""

import streamlit as st

from searchtrace.dashboard.data import baselines
from searchtrace.dashboard.ui import cached, charts, context
from searchtrace.dashboard.ui.compare_parts import (
    METRIC_COLUMNS,
    category_table,
    forest_plot,
    query_table,
    query_view,
    settings_diff,
    several_runs,
    styled_metrics,
)
from searchtrace.dashboard.ui.explain import legend
from searchtrace.dashboard.ui.overlap_parts import label_free
from searchtrace.dashboard.ui.text import show_table
from searchtrace.dashboard.ui.url_state import url_selectbox
from searchtrace.evals import labelled

st.title("Compare")
home = context.home()
runs = cached.list_runs(home)
if len(runs) < 2:
    st.info("Comparing needs at least two completed runs.")
    st.stop()

PAIR = ("base", "cand")
VIEW = (*PAIR, "metric", "show", "runs")  # the pair, then the lists' metric and outcome, the runs side by side
if context.restore("compare", VIEW):
    st.caption("The pair compared last in this session (the link named none).")
elif not any(context.param(n) for n in PAIR):
    st.caption("No runs named: the newest run against its baseline (the run of its dataset tagged baseline, "
               "else the run before it).")
ids = runs["run_id"].tolist()
newest_baseline = baselines(runs)["baseline"].iloc[0]
left, right = st.columns(2)
with left:
    base = context.select_run(runs, "Baseline", "compare-base", url_param="base",
                              default=ids.index(newest_baseline) if newest_baseline in ids else 1)
with right:
    cand = context.select_run(runs, "Candidate", "compare-cand", url_param="cand", default=0)
context.remember("compare", VIEW)
if base == cand:
    st.warning("Pick two different runs.")
    st.stop()

if not all(labelled(context.load(cached.load_run, home, run)) for run in (base, cand)):
    label_free(context.load(cached.overlap_runs, home, base, cand))  # no labels: the rankings alone
    st.stop()

comparison = context.load(cached.compare_runs, home, base, cand)
settings_diff(comparison)
if not comparison.same_dataset:
    st.warning("The runs scored different datasets (or different versions of one): deltas may mean little.")
st.caption(f"{comparison.n_queries} paired queries; delta = candidate - baseline; 95% paired bootstrap CI, "
           "unadjusted (one metric at a time); p-values Holm-corrected across metrics, so a CI that excludes 0 "
           "can stand beside a p above 0.05; verdict: better or worse when p (randomization, Holm) < 0.05, a "
           "delta that rounds to 0.000 is not significant.",
           help=legend(comparison.metrics["metric"].tolist()))
show_table(st, styled_metrics(comparison.metrics), hide_index=True, key="compare-metrics", column_config=METRIC_COLUMNS)
forest_plot(comparison)

st.subheader("Most regressed queries")
metrics = comparison.metrics["metric"].tolist()
left, right = st.columns([1, 2])
metric = url_selectbox(left, "Metric", metrics, key="compare-metric", param="metric", default="ndcg@10",
                       help=legend(metrics))
with right:
    view = query_view(comparison, metric)
picked = query_table(comparison, metric, view)
if picked:
    st.switch_page(context.QUERY, query_params={"query": picked, "run": cand, "base": base})

left, right = st.columns([3, 2])
with left:
    st.subheader("Per query")
    st.caption("Click a point to open its query side by side.")
    event = st.altair_chart(charts.pair_scatter(comparison.queries[metric], metric), width="stretch",
                            on_select="rerun", key="compare-scatter")
    points = (event.selection.get(charts.PICK) if event is not None else None) or []
    if points and points[0].get("query_id"):
        st.switch_page(context.QUERY, query_params={"query": points[0]["query_id"], "run": cand, "base": base})
with right:
    st.subheader("Per category")
    categories = comparison.categories[comparison.categories["metric"] == metric].drop(columns="metric")
    st.caption("No significance test per category: deltas here are uncoloured.")
    show_table(st, category_table(categories), hide_index=True, key="compare-categories")

several_runs(runs, base, cand)
context.remember("compare", VIEW)
