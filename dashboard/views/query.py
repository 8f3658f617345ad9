"""Query: one query across runs, and in one run its results, stage funnel, graph context and hints."""

import streamlit as st

from searchtrace.dashboard.ui import cached, charts, context
from searchtrace.dashboard.ui.query_parts import show_context, show_header

home, runs = context.runs_page("Query")

source = context.param("run") if context.param("run") in set(runs["run_id"]) else runs["run_id"].iloc[0]
options = context.load(cached.per_query, home, source, ["query_id"])["query_id"].tolist()
wanted = context.param("query")
if wanted and wanted not in options:
    options = [wanted, *options]
query_id = st.selectbox("Query", options, index=options.index(wanted) if wanted else 0, key="query-id")
if query_id != wanted:
    st.query_params["query"] = query_id

across = cached.query_across_runs(home, query_id, ("ndcg@10", "recall@100"))
if across.empty:
    st.warning(f"No run has query {query_id!r}.")
    st.stop()
run_id = context.select_run(runs[runs["run_id"].isin(across["run_id"])], "Run", "query-run")
view = context.load(cached.query_run, home, run_id, query_id)
if view is None:
    st.warning(f"Run {run_id} has no journal record of {query_id}.")
    st.stop()
show_header(view)

st.header("Across runs")
st.dataframe(across, hide_index=True, key="query-across", column_config={
    "created_at": st.column_config.DatetimeColumn("date", format="YYYY-MM-DD HH:mm")})
if len(across) > 1 and "ndcg@10" in across:
    st.altair_chart(charts.trend(across.rename(columns={"ndcg@10": "value"}), "ndcg@10"), width="stretch")

st.header(f"In {run_id}")

st.subheader("Results")
st.dataframe(view.results, hide_index=True, key="query-results", column_config={
    "gold": st.column_config.CheckboxColumn("gold"), "relevance": st.column_config.ProgressColumn(
        "relevance", min_value=0.0, max_value=1.0, format="%.3f")})

st.subheader("Stage funnel")
left, right = st.columns([2, 3])
left.altair_chart(charts.funnel(view.funnel), width="stretch")
right.caption("Each gold document: which stages had it, its rank after fusion and at the end, where it was lost.")
right.dataframe(view.gold, hide_index=True, key="query-gold")
show_context(view)
if view.trace_id and st.button("Open its trace", key="query-open-trace"):
    st.switch_page(context.TRACES, query_params={"trace": view.trace_id})
