"""Sections of the Compare page that only lay out a :class:`dashboard.data.RunComparison`."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from searchtrace.dashboard.data import RunComparison, metric_names
from searchtrace.dashboard.ui import context
from searchtrace.dashboard.ui.text import METRIC_FORMAT, md, show_table
from searchtrace.dashboard.ui.url_state import url_multiselect, url_segmented

__all__ = ["METRIC_COLUMNS", "query_table", "query_view", "several_runs", "settings_diff", "styled_metrics"]

GOOD, BAD = "#c8e6c9", "#ffcdd2"
NUMBERS = ("base", "candidate", "delta", "ci_low", "ci_high", "p_t_test", "p_randomization")
SHOWN = 0.0005  # a delta below this shows as 0.000: neutral, never coloured as a change
#: The metric table's column labels: what each number is, the interval's and the p-values' adjustment said.
METRIC_COLUMNS = {"ci_low": "CI low (95%, unadj.)", "ci_high": "CI high (95%, unadj.)",
                  "p_t_test": "p t-test (Holm)", "p_randomization": "p rand. (Holm)",
                  "significant": "p < 0.05 (Holm)"}
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


def _delta_colour(row: pd.Series, significance: bool) -> list[str]:
    marked = bool(row.get("significant", True)) if significance else True
    shown = abs(row["delta"]) >= SHOWN  # what reads +0.000 is no change, whatever its last bits
    colour = "" if not marked or not shown else f"background-color: {GOOD if row['delta'] > 0 else BAD}"
    return [colour if c == "delta" else "" for c in row.index]


def styled_metrics(frame: pd.DataFrame, significance: bool = True) -> Styler:
    """Metric rows with 3-decimal numbers; the delta cell green or red when significant (or, without
    ``significance``, whenever it is not zero)."""
    data = frame.copy()
    if "significant" in data:
        data["significant"] = data["significant"].map(lambda s: "✓" if s else "")
    formats: dict[str, Any] = {c: "{:.3f}" for c in NUMBERS if c in data}
    formats["delta"] = lambda x: "n/a" if x != x else "0.000" if abs(x) < SHOWN else f"{x:+.3f}"
    return data.style.format(formats, na_rep="n/a").apply(_delta_colour, axis=1, significance=significance)


def query_view(comparison: RunComparison, metric: str) -> str:
    """Which queries to list (regressed, improved, all changed), with the metric's wins, ties and losses."""
    view = url_segmented(st, "Show", list(VIEWS), default="regressed", key="compare-view", param="show")
    row = comparison.metrics[comparison.metrics["metric"] == metric].iloc[0].to_dict()
    st.caption(f"{md(metric)}: {row['wins']} wins, {row['ties']} ties, {row['losses']} losses")
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
    columns = ["query_id", "text", "category", "base", "candidate", "delta", "base_rank", "candidate_rank",
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
    show_table(st, table.style.format("{:.3f}", na_rep="n/a").highlight_max(axis=1, color=GOOD),
                 key="compare-several-table")
