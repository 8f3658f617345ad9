"""Traces: a filtered list (click a row to open one), its span tree, and a span's documents and attributes."""

import streamlit as st

from searchtrace.dashboard.ui import cached, charts, context
from searchtrace.dashboard.ui.layout import key_columns_first
from searchtrace.dashboard.ui.picks import pick_row
from searchtrace.dashboard.ui.text import MEDIUM, MS_FORMAT
from searchtrace.dashboard.ui.trace_filters import PARAMS, trace_filters
from searchtrace.dashboard.ui.trace_judging import show_trace_judging
from searchtrace.dashboard.ui.trace_parts import show_span, show_trace_header

st.title("Traces")
VIEW = ("trace", "span", *PARAMS)
if context.restore("traces", VIEW):
    st.caption("The trace shown last in this session (the link named none).")
home = context.home()
flt = trace_filters(cached.list_runs(home))
listed = cached.list_traces(home, flt)
if flt.attribute is not None:  # counting reads every span the filter passes: the page found is the count
    total = len(listed)
    more = " or more" if flt.limit is not None and total >= flt.limit else ""
else:
    total, more = cached.count_traces(home, flt), ""
st.caption(f"{total:,}{more} matching trace{'' if total == 1 else 's'} in the whole store; the first {len(listed):,} "
           f"shown, {flt.order.value} first. Click a row to open its trace. ❄ marks a cold search, its process's "
           "first (and the first after loading the model; ❄? an older slow search outside an eval run, likely one), "
           "so one slow start does not pass for a slow search.")
table = listed.assign(cold=listed["cold"].map({"yes": "❄", "likely": "❄?"}).fillna(""),
                      query=[q if q else "(refused before its query was read)" if code else ""
                             for q, code in zip(listed["query"], listed["error_code"])])
picked_trace = pick_row(table, listed["trace_id"].tolist(), key="traces-table", param="trace", what="trace",
                        keep_unlisted=True, hide_index=True, height=320,
                        column_order=key_columns_first(table.columns, "start", "status", "duration_ms", "cold"),
                        column_config={
                         "start": st.column_config.DatetimeColumn("start (UTC)", format="YYYY-MM-DD HH:mm:ss"),
                         "status": st.column_config.TextColumn("status", width="small"),
                         "source": st.column_config.TextColumn("source", width="small"),
                         "service": st.column_config.TextColumn("service", width="small"),
                         "root": st.column_config.TextColumn("root span"),
                         "duration_ms": st.column_config.NumberColumn("duration", format=MS_FORMAT),
                         "error_code": st.column_config.TextColumn("error code"),
                         "message": st.column_config.TextColumn("error message"),
                         "status_code": st.column_config.NumberColumn("HTTP", format="%d"),
                         "cold": st.column_config.TextColumn("cold", width="small"),
                         "query": st.column_config.TextColumn("query", width="large"),
                         "best_score": st.column_config.NumberColumn("bestScore", format="%.3f")})

if picked_trace is not None:
    trace_id = picked_trace
    if trace_id not in set(listed["trace_id"]):
        st.caption("The trace shown is not among the rows listed (the filters or the row limit leave it out).")
elif not listed.empty:
    trace_id = str(listed["trace_id"].iloc[0])
    st.caption("No trace picked: the newest listed is shown.")
else:
    context.remember("traces", VIEW)  # filters that list nothing are a view too
    st.info("No trace to show.")
    st.stop()

view = cached.waterfall(home, trace_id)
if view is None:
    st.warning("That trace is not in the store (pruned?).")
    st.stop()
show_trace_header(view)
show_trace_judging(home, view)
left, right = st.columns(2)
with left:
    st.subheader("Spans")
    st.altair_chart(charts.waterfall(view.spans), width="stretch")
with right:
    st.subheader("Span tree")
    st.caption("Select a span for its documents and attributes.")
    tree = view.spans[["label", "duration_ms", "status", "message", "skipped"]].assign(
        status=[charts.span_state(a, b) for a, b in zip(view.spans["status"], view.spans["skipped"])])
    span_id = pick_row(tree, view.spans["span_id"].tolist(), key="traces-spans", param="span", what="span",
                       notice=False, hide_index=True, height=38 + 35 * len(tree), column_config={
                              "label": st.column_config.TextColumn("span", width=MEDIUM),
                              "status": st.column_config.TextColumn("state"),
                              "message": st.column_config.TextColumn("error message"),
                              "duration_ms": st.column_config.NumberColumn("duration", format=MS_FORMAT)})
context.remember("traces", VIEW)
show_span(home, view, span_id)
