"""The Compare page for runs without labels: a :class:`dashboard.data.OverlapView` laid out."""

from __future__ import annotations

import streamlit as st

from searchtrace.dashboard.data import OverlapView
from searchtrace.dashboard.ui import charts, context
from searchtrace.dashboard.ui.explain import explain, legend
from searchtrace.dashboard.ui.text import METRIC_FORMAT, md, show_table

__all__ = ["label_free"]

COLUMNS = ["query_id", "text", "rbo", "rbo_deep", "jaccard", "new_in_top", "base_band", "candidate_band",
           "latency_delta_ms"]


def _head(view: OverlapView) -> None:
    base, cand = view.names
    shared, only_base, only_cand = view.counts
    up, same, down = view.bands
    st.markdown(f"**{md(cand)}** against baseline **{md(base)}**, compared by their rankings: a run has no labels.")
    st.caption(f"{shared} shared queries ({only_base} only in base, {only_cand} only in candidate); best band: "
               f"{up} up, {down} down, {same} unchanged. RBO: rank-biased overlap (Webber, Moffat and Zobel 2010), "
               f"extrapolated, within [lower bound, lower bound + residual]; p={view.ps[0]:g} weighs the top 10 "
               f"ranks 86%" + (f", p={view.ps[1]:g} the top 50 85%" if len(view.ps) > 1 else "")
               + ". Traffic-weighted: each query counts count / inclusion probability times (Horvitz-Thompson).",
               help=legend(["rbo", "jaccard"]))
    for note in view.notes:
        st.caption(f"Note: {md(note)}")


def _changed(view: OverlapView) -> None:
    """The most changed queries, and buttons that open each side's trace of the one picked."""
    st.subheader("Most changed queries")
    changed = view.most_changed
    if changed.empty:
        st.info("No query's ranking changed.")
        return
    number = st.column_config.NumberColumn
    show_table(st, changed[COLUMNS], hide_index=True, key="overlap-changed", height=min(38 + 35 * len(changed), 420),
                 column_config={"text": st.column_config.TextColumn("query", width="large"),
                                "rbo": number(f"RBO p={view.ps[0]:g}", format=METRIC_FORMAT, help=explain("rbo")),
                                "rbo_deep": number(f"RBO p={view.ps[-1]:g}", format=METRIC_FORMAT,
                                                   help=explain("rbo")),
                                "jaccard": number(f"Jaccard@{view.k}", format=METRIC_FORMAT,
                                                  help=explain("jaccard")),
                                "new_in_top": number(f"new in top {view.k}"),
                                "latency_delta_ms": number("latency change (ms)", format="%+.1f")})
    rbo = dict(zip(changed["query_id"].astype(str), changed["rbo"].astype(float)))
    picked = st.selectbox("Query", list(rbo), key="overlap-query", format_func=lambda q: f"{q}: RBO {rbo[q]:.3f}")
    row = changed.set_index("query_id").loc[picked]
    left, right = st.columns(2)
    for column, side, trace in ((left, "base", row["base_trace"]), (right, "candidate", row["candidate_trace"])):
        if trace and column.button(f"Open the {side} trace", key=f"overlap-open-{side}",
                                   type="primary" if side == "candidate" else "secondary"):
            st.switch_page(context.TRACES, query_params={"trace": trace})


def label_free(view: OverlapView) -> None:
    """The label-free comparison: summary numbers, a histogram of per-query RBO, the most changed queries."""
    _head(view)
    left, right = st.columns([2, 3])
    with left:
        show_table(st, view.summary.style.format(precision=4, na_rep="n/a"), hide_index=True, key="overlap-summary")
    with right:
        st.altair_chart(charts.rbo_histogram(view.queries, view.ps[0]), width="stretch", key="overlap-histogram")
    _changed(view)
