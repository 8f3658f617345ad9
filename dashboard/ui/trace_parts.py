"""Sections of the Traces page that only lay out a :class:`dashboard.data.Waterfall`."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from searchtrace.dashboard.data import Waterfall, span_documents
from searchtrace.dashboard.ui import context
from searchtrace.dashboard.ui.text import MEDIUM, band_style, md, ms

__all__ = ["show_span", "show_trace_header"]


def show_trace_header(view: Waterfall) -> None:
    """The query, its mode and duration, a cold-start flag, and links to its run and query."""
    summary = view.summary
    st.markdown(f"### {md(summary['query'] or '(query not recorded)')}")
    st.caption(f"trace {md(summary['trace_id'])} · {md(summary['mode'] or '?')} mode · {ms(summary['duration_ms'])}"
               f" · {summary['n_spans']} spans")
    if view.cold_ms is not None:
        st.warning(f"Cold start: the embed stage took {ms(view.cold_ms)} loading the model; later searches of "
                   "the same process do not pay it.")
    run_id, query_id = summary.get("run_id"), summary.get("query_id")
    if run_id:
        left, right, _ = st.columns([1, 1, 2])
        if left.button("Its query in the run", key="traces-open-query"):
            st.switch_page(context.QUERY, query_params={"run": run_id, "query": query_id or ""})
        if right.button("Its run", key="traces-open-run"):
            st.switch_page(context.COMPARE, query_params={"cand": run_id})
        st.caption(f"eval run {md(run_id)}, query {md(query_id or '-')}")


def show_span(home: Path, view: Waterfall, span_id: str | None) -> None:
    """A span's documents table (retrieval stages, reranker, results) and its other attributes."""
    ids = view.spans["span_id"].astype(str).tolist()
    shown: str = span_id if span_id is not None and span_id in ids else ids[0]
    span = view.spans.iloc[ids.index(shown)]
    st.subheader(f"Span: {md(span['name'])}")
    state = f"skipped: {md(span['skipped'])}" if span["skipped"] else "error" if span["status"] == "ERROR" else "ran"
    st.caption(f"{ms(float(view.spans['duration_ms'].iloc[ids.index(shown)]))} · {state}")
    table = span_documents(home, view, shown)
    if table is not None:
        gold = table["grade"].notna().any()
        data = table.assign(gold=["★" * int(g) if g and g == g else "" for g in table["grade"].fillna(0)])
        columns = ["rank", "doc_id", "title", "score", "band", *(["gold"] if gold else []),
                   *(["content"] if data["content"].str.len().any() else [])]
        st.caption(f"{len(data)} documents" + (" · ★ gold grade in the eval run" if gold else ""))
        styled = data[columns].style.map(band_style, subset=["band"]).format({"score": "{:.3f}"})
        st.container(key="traces-documents-box").dataframe(
                     styled, hide_index=True, key="traces-documents", height=38 + 35 * min(len(data), 10),
                     column_config={"title": st.column_config.TextColumn("title", width=MEDIUM)})
    attributes = view.attributes[view.attributes["span_id"] == shown][["key", "value"]]
    if attributes.empty:
        st.caption("No other attributes.")
    else:
        st.dataframe(attributes, hide_index=True, key="traces-attributes", column_config={
            "key": st.column_config.TextColumn("attribute", width=MEDIUM),
            "value": st.column_config.TextColumn("value", width="large")})
