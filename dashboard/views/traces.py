"""Traces: a filtered list of stored traces, and one trace as a span waterfall."""

import streamlit as st

from searchtrace.dashboard.ui import cached, charts, context
from searchtrace.dashboard.ui.trace_filters import trace_filters

st.title("Traces")
home = context.home()
filters, limit = trace_filters(cached.list_runs(home))
listed = cached.list_traces(home, **filters, limit=limit)
total = cached.count_traces(home, **filters)
st.caption(f"{total:,} matching traces; the newest {len(listed):,} shown.")
st.dataframe(listed, hide_index=True, key="traces-table", column_config={
    "start": st.column_config.DatetimeColumn("start", format="YYYY-MM-DD HH:mm:ss"),
    "duration_ms": st.column_config.NumberColumn("ms", format="%.2f"),
    "best_score": st.column_config.NumberColumn("bestScore", format="%.3f")})

st.header("Trace")
options = listed["trace_id"].tolist()
wanted = context.param("trace")
if wanted and wanted not in options:
    options = [wanted, *options]
if not options:
    st.info("No trace to show.")
    st.stop()
queries = dict(zip(listed["trace_id"], listed["query"].fillna("")))
trace_id = st.selectbox("Trace", options, index=options.index(wanted) if wanted else 0, key="traces-pick",
                        format_func=lambda t: f"{t}  {queries.get(t, '')[:80]}")
if trace_id != wanted:
    st.query_params["trace"] = trace_id
view = cached.waterfall(home, trace_id)
if view is None:
    st.warning(f"Trace {trace_id} is not in the store (pruned?).")
    st.stop()
summary = view.summary
st.markdown(f"**{summary['query'] or '(query not recorded)'}**: {summary['mode'] or '?'} mode, "
            f"{summary['duration_ms']:.2f} ms, run `{summary['run_id'] or '-'}` query `{summary['query_id'] or '-'}`")
st.altair_chart(charts.waterfall(view.spans), width="stretch")
st.dataframe(view.spans.drop(columns=["parent_id"]), hide_index=True, key="traces-spans", column_config={
    c: st.column_config.NumberColumn(c, format="%.3f") for c in ("start_ms", "end_ms", "duration_ms")})
names = view.spans["name"].tolist()
span = st.selectbox("Span attributes", names, key="traces-span")
st.dataframe(view.attributes[view.attributes["name"] == span].drop(columns=["span_id", "name"]),
             hide_index=True, key="traces-attributes")
