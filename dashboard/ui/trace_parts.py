"""Sections of the Traces page that only lay out a :class:`dashboard.data.Waterfall`."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from searchtrace.dashboard.data import Waterfall, span_documents
from searchtrace.dashboard.ui import context
from searchtrace.dashboard.ui.text import MEDIUM, band_style, gold_rows, md, ms, plain_heading, show_table
from searchtrace.traces import SEARCH_SPAN, TraceKind

__all__ = ["show_span", "show_trace_header"]


def _heading(view: Waterfall) -> str:
    """A search's query; else what the trace is (a model load, a served request) by its root span. Plain
    text: :func:`plain_heading` escapes it."""
    summary = view.summary
    kind = summary.get("kind")
    if kind in (TraceKind.MODEL_LOAD.value, TraceKind.OTHER.value):
        what = "Model load" if kind == TraceKind.MODEL_LOAD.value else "Request without a search"
        return f"{what}: {summary.get('root_name') or '?'}"
    if summary["query"]:
        return str(summary["query"])
    return "(failed before its query was recorded)" if summary.get("error_code") else "(query not recorded)"


def _about(view: Waterfall) -> str:
    """The caption under the heading: the trace id, where it came from, its mode, duration and spans."""
    summary = view.summary
    parts = [f"trace {md(summary['trace_id'])}"]
    if summary.get("source"):
        parts.append(f"from {md(summary['source'])}")
    if summary.get("root_name") and summary.get("root_name") != SEARCH_SPAN:
        parts.append(f"root {md(summary['root_name'])}")
    if summary.get("status_code") is not None:
        parts.append(f"HTTP {summary['status_code']}")
    if summary["mode"]:
        parts.append(f"{md(summary['mode'])} mode")
    return " · ".join([*parts, ms(summary["duration_ms"]), f"{summary['n_spans']} spans"])


def show_trace_header(view: Waterfall) -> None:
    """The query (or what the trace is), where it came from, its mode and duration, its first error, a
    cold-start flag, and links to its run and query."""
    summary = view.summary
    st.html(plain_heading(_heading(view)))
    st.caption(_about(view))
    error = view.error
    if error is not None:
        others = f" ({error.spans_in_error} spans in error)" if error.spans_in_error > 1 else ""
        said = f": {md(error.message)}" if error.message else " (no message recorded)"
        lead = "Failed" if error.failed else "A stage failed and the search went on without it"
        code = f" · {md(summary['error_code'])}" if summary.get("error_code") else ""
        st.error(f"{lead} in **{md(error.name)}**{said}{others}{code}", icon="⚠️")
    if view.cold:
        st.info("❄ Cold search: its process's first after loading the embedding model (a trace of its own, "
                "just before), so it pays for cold caches that later searches do not.")
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
    _show_span_error(view, shown, str(span["status"]), str(span["message"]))
    table = span_documents(home, view, shown)
    if table is not None:
        gold = table["grade"].notna().any()
        data = table.assign(gold=["★" * int(g) if g and g == g else "" for g in table["grade"].fillna(0)])
        columns = ["rank", *(["gold"] if gold else []), "doc_id", "title", "score", "band",
                   *(["content"] if data["content"].str.len().any() else [])]
        ranks = [str(r) for r, g in zip(data["rank"], data["gold"]) if g]
        found = (f" · {len(ranks)} gold (★ grade in the eval run, shaded) at rank {', '.join(ranks[:12])}"
                 f"{' …' if len(ranks) > 12 else ''}" if ranks else " · no gold document among them" if gold else "")
        st.caption(f"{len(data)} documents{found}")
        styled = data[columns].style.map(band_style, subset=["band"]).format({"score": "{:.3f}"})
        if gold:
            styled = styled.apply(gold_rows, axis=None)
        show_table(st.container(key="traces-documents-box"), styled, hide_index=True, key="traces-documents",
                   height=38 + 35 * min(len(data), 10), column_config={"title": st.column_config.TextColumn("title", width=MEDIUM)})
    attributes = view.attributes[view.attributes["span_id"] == shown][["key", "value"]]
    if attributes.empty:
        st.caption("No other attributes.")
    else:
        show_table(st, attributes, hide_index=True, key="traces-attributes", column_config={
            "key": st.column_config.TextColumn("attribute", width=MEDIUM),
            "value": st.column_config.TextColumn("value", width="large")})


def _show_span_error(view: Waterfall, span_id: str, status: str, message: str) -> None:
    """A span's error: its status message, and each exception it recorded with its traceback."""
    raised = view.exceptions[view.exceptions["span_id"] == span_id]
    if status == "ERROR":
        st.error(f"Ended in error: {md(message)}" if message else "Ended in error (no message recorded).")
    for row in raised.itertuples(index=False):
        with st.expander(f"Exception {md(row.type)}: {md(row.message, 160)}", expanded=status == "ERROR"):
            st.code(row.stacktrace or f"{row.type}: {row.message}", language=None)
