"""Sections of the Query page that only lay out :class:`dashboard.data.QueryRun` and :class:`SideBySide`."""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd
import streamlit as st

from searchtrace.dashboard.data import QueryRun, SideBySide
from searchtrace.dashboard.data.gold_path import RANKING_STAGES
from searchtrace.dashboard.ui import charts, context
from searchtrace.dashboard.ui.layout import key_columns_first
from searchtrace.dashboard.ui.query_help import help_for
from searchtrace.dashboard.ui.text import BAND_BACKGROUND, band_style, gold_rows, md, plain_heading, show_table
from searchtrace.retriever import RetryHints

__all__ = ["band_chips", "band_list", "show_context", "show_gold_moves", "show_gold_paths", "show_header",
           "show_run"]

HINTS = (("detected_entities", "Detected entities"), ("related_terms", "Related terms"),
         ("narrower_query", "Narrower query"), ("broader_query", "Broader query"))


def show_header(view: QueryRun) -> None:
    """The query text and its id."""
    st.html(plain_heading(view.text or "(query text not recorded)"))
    st.caption(f"query {md(view.query_id)}")


def _moved(rank: Any, other: Any, side: str) -> str:
    """Where a result went from the baseline to the candidate, read from either side."""
    if other is None or other is pd.NA:
        return "not in candidate" if side == "baseline" else "new"
    before, after = (rank, other) if side == "baseline" else (other, rank)
    arrow = "=" if before == after else f"▲{before - after}" if after < before else f"▼{after - before}"
    return f"→ {other} {arrow}" if side == "baseline" else f"from {other} {arrow}"


def _results_table(results: pd.DataFrame, key: str, side: str) -> None:
    data = results.assign(gold=["★" * int(g) if g else "" for g in results["grade"]],
                          moved=[_moved(r, o, side) for r, o in zip(results["rank"], results["other_rank"])]
                          if "other_rank" in results else "")
    # relevance, band and move next to the rank, so a narrow column still shows them beside each result
    data = data[["rank", "gold", "relevance", "band", "moved", "title", "snippet", "doc_id"]]
    styled = (data.style.map(band_style, subset=["band"]).apply(gold_rows, axis=None)
              .format({"relevance": "{:.3f}"}))
    st.caption("Ranked best first. Relevance is the calibrated relevance, shown as a running minimum down the "
               "ranking (a result never shows more than the one above it); gold documents are shaded.")
    show_table(st.container(key=f"{key}-box"), styled, hide_index=True,
                 key=key, height=38 + 35 * min(len(data), 12), column_config={
                     "rank": st.column_config.NumberColumn("rank", width=40, help=help_for("rank")),
                     "gold": st.column_config.TextColumn("gold", width=40, help=help_for("gold")),
                     "title": st.column_config.TextColumn("title", width=120),
                     "snippet": st.column_config.TextColumn("snippet", width=210),
                     "relevance": st.column_config.NumberColumn("relevance", width=70, help=help_for("relevance")),
                     "band": st.column_config.TextColumn("band", width=60, help=help_for("band")),
                     "moved": st.column_config.TextColumn(
                         "in candidate" if side == "baseline" else "vs baseline", width=95,
                         help=help_for("moved"))})


def show_run(view: QueryRun | None, results: pd.DataFrame, side: str, names: Mapping[str, str],
             metric_value: float | None) -> None:
    """One run's column: name, outcome, ranking, funnel and a link to the trace."""
    if view is None:
        st.info(f"The {side} run has no record of this query.")
        return
    st.html(plain_heading(f"{side.capitalize()}: {names.get(view.run_id, view.run_id)}"))
    ndcg = "n/a" if metric_value is None or metric_value != metric_value else f"{metric_value:.3f}"
    st.markdown(f"nDCG@10 **{ndcg}** · bestScore **{view.best_score:.3f}** · "
                f"{'no confident result' if view.no_confident else 'confident results'} · {md(view.mode or '?')} mode",
                help=" ".join(help_for(k) for k in ("ndcg@10", "bestScore", "noConfidentResults")))
    if view.degraded:
        st.warning(f"Degraded stages: {md(', '.join(view.degraded))}")
    if view.error:
        st.error(f"The search failed: {md(view.error)}")
    _results_table(results, f"query-results-{side}", side)
    skipped = view.funnel[view.funnel["skipped"] != ""]
    st.altair_chart(charts.funnel(view.funnel), width="stretch")
    st.caption("Funnel: " + help_for("funnel"))
    if not skipped.empty:
        st.caption("Skipped stages (they did not run, so they hold no gold document): "
                   + "; ".join(f"{md(s)}: {md(r)}" for s, r in zip(skipped["stage"], skipped["skipped"])))
    if view.trace_id and st.button(f"Open the {side} trace", key=f"query-open-trace-{side}",
                                   type="primary" if side == "candidate" else "secondary"):
        st.switch_page(context.TRACES, query_params={"trace": view.trace_id})


def show_gold_moves(pair: SideBySide) -> None:
    """Where each gold document went between the runs."""
    st.subheader("Gold documents")
    if pair.gold.empty:
        st.caption("No gold document is judged for this query.")
        return
    gold = pair.gold.assign(grade=["★" * int(g) for g in pair.gold["grade"]])
    show_table(st.container(key="query-gold-box"), gold, hide_index=True,
                 column_order=key_columns_first(gold.columns, "doc_id", "grade", "base_rank", "candidate_rank", "move"),
                 key="query-gold", column_config={"move": st.column_config.TextColumn(
                     "base → candidate rank", help=help_for("gold_moves")),
                     "base_rank": "base rank", "candidate_rank": "cand. rank"})


def show_gold_paths(view: QueryRun | None, side: str, names: Mapping[str, str]) -> None:
    """Each gold document's rank at every stage of ``view``'s search, and the stage that lost it, in words."""
    if view is None or view.gold_path.empty:
        return
    st.markdown(f"**{side.capitalize()}: {md(names.get(view.run_id, view.run_id))}**", help=help_for("where"))
    st.markdown("\n".join(f"- {md(doc)} ({'★' * int(grade)}): {md(where)}" for doc, grade, where in
                          zip(view.gold_path["doc_id"], view.gold_path["grade"], view.gold_path["where"])))
    stages = [s for s in RANKING_STAGES if view.gold_path[s].notna().any()]
    table = view.gold_path[["doc_id", *stages, "final_rank", "lost_stage"]]
    show_table(st, table, hide_index=True, key=f"query-gold-path-{side}",
               column_order=key_columns_first(table.columns, "doc_id", "final_rank", "lost_stage"), column_config={
        **{s: st.column_config.TextColumn(s, help=help_for("shape" if s == "shape" else "stage_rank"))
           for s in stages},
        "final_rank": st.column_config.NumberColumn("final rank", help=help_for("final_rank")),
        "lost_stage": st.column_config.TextColumn("lost at", help=help_for("lost_stage"))})


def band_list(value: Any) -> list[str]:
    """A query's result bands as a list, from the comma-joined text a run's per-query file holds (or a list)."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return []
    parts = value if isinstance(value, (list, tuple)) else str(value).split(",")
    return [str(p).strip() for p in parts if str(p).strip()]


def band_chips(label: str = "bands") -> Any:
    """A column showing a list of bands as chips, each band in its own colour (the cells' and charts' hues)."""
    return st.column_config.MultiselectColumn(label, options=list(BAND_BACKGROUND),
                                              color=list(BAND_BACKGROUND.values()), help=help_for("bands"))


def _hints(hints: RetryHints | None) -> list[str]:
    lines = []
    for key, label in HINTS if hints is not None else ():
        value = getattr(hints, key)
        if isinstance(value, tuple) and value:
            lines.append(f"- **{label}**: " + ", ".join(md(v) for v in value))
        elif isinstance(value, str) and value:
            lines.append(f"- **{label}**: {md(value)}")
    return lines


def show_context(view: QueryRun) -> None:
    """Graph triples (subject → relation → object), rewrite terms and retry hints, as text."""
    left, right = st.columns(2)
    with left:
        st.subheader("Knowledge graph")
        trace = view.trace
        if trace is not None:
            st.caption(f"Entities detected: {md(', '.join(trace.entities) or 'none')}; graph triples reached: "
                       f"{trace.graph_triples if trace.graph_triples is not None else 0}.")
        if view.kg.empty:
            st.caption("No triples behind the results.")
        else:
            triples = pd.DataFrame({"triple": [f"{s} → {r} → {o}" for s, r, o in
                                               zip(view.kg["subject"], view.kg["relation"], view.kg["object"])],
                                    "document": view.kg["doc_id"]})
            show_table(st, triples, hide_index=True, key="query-kg", column_config={
                "triple": st.column_config.TextColumn("subject → relation → object", width="large")})
    with right:
        st.subheader("Rewrite and retry hints")
        terms = view.trace.rewrite_terms if view.trace else ()
        st.markdown(f"**Rewrite terms**: {', '.join(md(t) for t in terms) or 'none'}")
        lines = _hints(view.retry_hints)
        if lines:
            st.markdown("\n".join(lines))
        else:
            st.caption("No retry hints: the best result reached the high band.")

