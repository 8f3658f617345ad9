"""Sections of the Query page that only lay out a :class:`dashboard.data.QueryRun`."""

from __future__ import annotations

import streamlit as st

from searchtrace.dashboard.data import QueryRun

__all__ = ["show_context", "show_header"]


def show_header(view: QueryRun) -> None:
    """The query text and its outcome in this run."""
    st.markdown(f"**{view.query_id}**: {view.text or '(query text not recorded)'}")
    best, flag, mode, degraded = st.columns(4)
    best.metric("bestScore", f"{view.best_score:.3f}")
    flag.metric("noConfidentResults", "yes" if view.no_confident else "no")
    mode.metric("mode", view.mode or "?")
    degraded.metric("degraded", ", ".join(view.degraded) or "none")
    if view.error:
        st.error(f"The search failed: {view.error}")


def show_context(view: QueryRun) -> None:
    """Graph triples, rewrite terms and retry hints."""
    left, right = st.columns(2)
    with left:
        st.subheader("Knowledge graph")
        trace = view.trace
        if trace is not None:
            st.caption(f"Entities detected: {', '.join(trace.entities) or 'none'}; "
                       f"graph triples reached: {trace.graph_triples if trace.graph_triples is not None else 0}.")
        if view.kg.empty:
            st.caption("No triples behind the results.")
        else:
            st.caption("Dataset triples of the result documents the graph stage reached.")
            st.dataframe(view.kg, hide_index=True, key="query-kg")
    with right:
        st.subheader("Rewrite and retry hints")
        terms = view.trace.rewrite_terms if view.trace else ()
        st.markdown(f"Rewrite terms: {', '.join(f'`{t}`' for t in terms) or 'none'}")
        if view.retry_hints:
            st.json(dict(view.retry_hints), expanded=True)
        else:
            st.caption("No retry hints: the best result reached the high band.")
