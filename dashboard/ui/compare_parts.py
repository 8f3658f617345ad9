"""Sections of the Compare page that only lay out a :class:`dashboard.data.RunComparison`."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from searchtrace.dashboard.data import RunComparison, forest_rows, metric_names, p_text, verdict
from searchtrace.dashboard.ui import charts, context
from searchtrace.dashboard.ui.charts import VERDICT_BACKGROUND
from searchtrace.dashboard.ui.explain import FIGURES, legend
from searchtrace.dashboard.ui.text import METRIC_FORMAT, md, show_table
from searchtrace.dashboard.ui.url_state import url_multiselect, url_segmented

__all__ = ["METRIC_COLUMNS", "ORDER", "category_table", "forest_plot", "query_table", "query_view", "several_runs",
           "settings_diff", "styled_metrics"]

NUMBERS = ("base", "candidate", "ci_low", "ci_high")
SHOWN = 0.0005  # a delta below this shows as 0.000: neutral, never coloured as a change
#: The metric table's columns, key ones first (the metric, the delta, its verdict, p, wins/ties/losses), so
#: none of them is the one cut off at the right edge.
ORDER = ["metric", "delta", "verdict", "p_randomization", "wins", "ties", "losses", "base", "candidate", "ci_low",
         "ci_high", "p_t_test"]
#: The metric table's column labels and help marks: what each number is, the interval's and the p-values'
#: adjustment said.
METRIC_COLUMNS = {
    "metric": st.column_config.TextColumn("metric", pinned=True, help="Hover a metric's name in the forest plot's "
                                          "legend below, or the Metric picker, for what it measures."),
    "delta": st.column_config.NumberColumn("delta", help=FIGURES["delta"]),
    "verdict": st.column_config.TextColumn("verdict", help=FIGURES["verdict"]),
    "p_randomization": st.column_config.TextColumn("p rand. (Holm)", help=FIGURES["p-value"]),
    "wins": st.column_config.NumberColumn("wins", width=60, help=FIGURES["wins/ties/losses"]),
    "ties": st.column_config.NumberColumn("ties", width=60, help=FIGURES["wins/ties/losses"]),
    "losses": st.column_config.NumberColumn("losses", width=60, help=FIGURES["wins/ties/losses"]),
    "base": st.column_config.NumberColumn("base", help="The baseline run's mean over the paired queries."),
    "candidate": st.column_config.NumberColumn("candidate", help="The candidate run's mean over the paired queries."),
    "ci_low": st.column_config.NumberColumn("CI low (95%, unadj.)", help=FIGURES["ci"]),
    "ci_high": st.column_config.NumberColumn("CI high (95%, unadj.)", help=FIGURES["ci"]),
    "p_t_test": st.column_config.TextColumn("p t-test (Holm)", help=FIGURES["p t-test"]),
}
VIEWS = {"regressed": "loss", "improved": "win", "all changed": None}


def settings_diff(comparison: RunComparison) -> None:
    """Both runs' names and the settings that differ, ``dense weight: 1 → 0``."""
    base, cand = comparison.names
    if comparison.settings:
        changes = "; ".join(f"**{md(key)}** {md(a)} → {md(b)}" for key, a, b in comparison.settings)
        st.markdown(f"**{md(cand)}** against baseline **{md(base)}**. Settings that differ: {changes}")
    else:
        st.markdown(f"**{md(cand)}** against baseline **{md(base)}**. Same settings: any difference comes from "
                    "the code, the index or the data.")


def _verdict_colour(row: pd.Series) -> list[str]:
    colour = VERDICT_BACKGROUND.get(str(row.get("verdict")), "")
    return [f"background-color: {colour}" if colour and c in ("delta", "verdict") else "" for c in row.index]


def _delta(x: float) -> str:
    return "n/a" if x != x else "0.000" if abs(x) < SHOWN else f"{x:+.3f}"


def styled_metrics(frame: pd.DataFrame) -> Styler:
    """Metric rows (columns in :data:`ORDER`) with 3-decimal numbers, p-values as ``< 0.001`` below it, the
    verdict in words, and the delta and verdict cells coloured by verdict (:data:`charts.VERDICT_LEGEND`). A
    delta that rounds to 0.000 is no change whatever its p: not significant."""
    data = frame.copy()
    shown = data["delta"].abs() >= SHOWN
    data["verdict"] = [verdict(d, bool(s) and bool(keep)) for d, s, keep in zip(data["delta"], data["significant"], shown)]
    for column in ("p_randomization", "p_t_test"):  # text in the data itself: a table shows no 0.000 p
        if column in data:
            data[column] = [p_text(p) for p in data[column]]
    data = data[[c for c in ORDER if c in data]]
    formats: dict[str, Any] = {c: "{:.3f}" for c in NUMBERS if c in data} | {"delta": _delta}
    return data.style.format(formats, na_rep="n/a").apply(_verdict_colour, axis=1)


def category_table(frame: pd.DataFrame) -> Styler:
    """Per-category rows, uncoloured: no test runs per category, so no delta there is marked significant."""
    formats: dict[str, Any] = {c: "{:.3f}" for c in ("base", "candidate") if c in frame} | {"delta": _delta}
    return frame.style.format(formats, na_rep="n/a")


def forest_plot(comparison: RunComparison) -> None:
    """Each metric's delta with its 95% interval, coloured by verdict, the legend in words under it."""
    rows = forest_rows(comparison.metrics)
    if rows.empty:
        return
    st.altair_chart(charts.forest(rows), width="stretch")
    st.caption(charts.VERDICT_LEGEND + " Dot: the delta; bar: its 95% paired bootstrap interval; dashed line: no "
               "change. p-values below 0.001 read < 0.001.", help=legend(rows["metric"].tolist()))


def query_view(comparison: RunComparison, metric: str) -> str:
    """Which queries to list (regressed, improved, all changed), with the metric's wins, ties and losses."""
    view = url_segmented(st, "Show", list(VIEWS), default="regressed", key="compare-view", param="show")
    row = comparison.metrics[comparison.metrics["metric"] == metric].iloc[0].to_dict()
    st.caption(f"{md(metric)}: {row['wins']} wins, {row['ties']} ties, {row['losses']} losses",
               help=FIGURES["wins/ties/losses"])
    return str(view)


def query_table(comparison: RunComparison, metric: str, view: str) -> str | None:
    """The regressed (or improved) queries, sortable; returns the query of a selected row."""
    pairs = comparison.queries[metric]
    outcome = VIEWS[view]
    shown = pairs[pairs["outcome"] == outcome] if outcome else pairs[pairs["outcome"] != "tie"]
    shown = shown.sort_values("delta", ascending=outcome != "win", ignore_index=True)
    st.caption(f"{len(shown)} queries; sorted by delta (click a header to sort by another column). Gold ranks: "
               "each gold document's final rank, highest grade first (- = not ranked). Select a row to open "
               "the query side by side.")
    number = st.column_config.NumberColumn
    # the query's id, the metric and its delta first: what a narrow window must show (ui.layout)
    columns = ["query_id", "base", "candidate", "delta", "text", "category", "base_rank", "candidate_rank",
               "base_gold_ranks", "candidate_gold_ranks"]
    event = show_table(st,
        shown[columns], hide_index=True, key=f"compare-queries-{view}", on_select="rerun",
        selection_mode="single-row", height=min(38 + 35 * max(len(shown), 1), 420),
        column_config={"text": st.column_config.TextColumn("query", width="large"),
                       "base": number(f"base {metric}", format=METRIC_FORMAT),
                       "candidate": number(f"cand. {metric}", format=METRIC_FORMAT),
                       "delta": number("delta", format="%+.3f"),
                       "base_rank": number("base best gold rank"), "candidate_rank": number("cand. best gold rank"),
                       "base_gold_ranks": "base gold ranks", "candidate_gold_ranks": "cand. gold ranks"})
    rows = event.selection.rows if event is not None else []
    return str(shown["query_id"].iloc[rows[0]]) if rows else None


def several_runs(runs: pd.DataFrame, base: str, cand: str) -> None:
    """Pick N runs and see their metrics side by side (one column per run)."""
    st.header("Several runs")
    label = context.run_label(runs)
    picked = url_multiselect(st, "Runs", runs["run_id"].tolist(), default=[base, cand], format_func=label,
                             key="compare-several", param="runs")
    if not picked:
        return
    chosen = runs.set_index("run_id").loc[picked]
    table = chosen[metric_names(runs)].T
    table.columns = [f"{label(r)}" for r in picked]
    best = table.style.format("{:.3f}", na_rep="n/a").highlight_max(axis=1, props="font-weight: bold")
    st.caption("Bold: the best run on each metric (green and red mean significance on this page, so not here).")
    show_table(st, best, key="compare-several-table")
