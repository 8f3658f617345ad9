"""Sections of the Runs page that only lay out: each run's delta against its baseline, flagged in words and
coloured by significance, and the regressions named above the table."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from searchtrace.dashboard.data.baselines import BETTER, NOT_SIGNIFICANT, WORSE, p_text
from searchtrace.dashboard.ui.charts import VERDICT_BACKGROUND, VERDICT_LEGEND
from searchtrace.dashboard.ui.text import md

__all__ = ["MARKS", "delta_columns", "flag_regressions", "styled_runs"]

#: A verdict as a mark and words, so a regression reads without its colour.
MARKS = {BETTER: "▲ better", WORSE: "▼ regression", NOT_SIGNIFICANT: "= not significant"}


def delta_columns(table: pd.DataFrame, deltas: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """``table`` (one row per run, with ``run_id``) with the baseline's name, the delta, the verdict in words
    and its p-value inserted after ``dataset``; a run without a baseline gets empty cells."""
    by_run = deltas.set_index("run_id")
    runs = table["run_id"]
    extra = pd.DataFrame({
        "baseline": [names.get(str(b), b) if b is not None else None for b in runs.map(by_run["baseline"])],
        "delta": runs.map(by_run["delta"]).astype(float),
        "vs baseline": [MARKS.get(v, "") if isinstance(v, str) else "" for v in runs.map(by_run["verdict"])],
        "p": [p_text(p) if p == p else "" for p in runs.map(by_run["p"]).astype(float)],
    }, index=table.index)
    at = list(table.columns).index("dataset") + 1
    return pd.concat([table.iloc[:, :at], extra, table.iloc[:, at:]], axis=1)


def _cells(row: pd.Series) -> list[str]:
    verdict = next((v for v, mark in MARKS.items() if mark == row["vs baseline"]), None)
    colour = f"background-color: {VERDICT_BACKGROUND[verdict]}" if verdict else ""
    return [colour if c in ("delta", "vs baseline") else "" for c in row.index]


def styled_runs(table: pd.DataFrame) -> Any:
    """The runs table with its delta and verdict cells coloured by verdict (see :data:`VERDICT_LEGEND`)."""
    return table.style.apply(_cells, axis=1)


def flag_regressions(deltas: pd.DataFrame, names: dict[str, str], metric: str, shown: list[str]) -> None:
    """A warning naming each shown run that is significantly worse than its baseline on ``metric`` (or a
    caption saying none is), and the colours' legend."""
    worse = deltas[(deltas["verdict"] == WORSE) & deltas["run_id"].isin(shown)]
    if len(worse):
        listed = "; ".join(f"{md(names.get(run, run))} {delta:+.3f} against {md(names.get(base, base))} "
                           f"(p {md(p_text(p))})" for run, base, delta, p in
                           zip(worse["run_id"].astype(str), worse["baseline"].astype(str), worse["delta"].astype(float),
                               worse["p"].astype(float)))
        noun = "run is" if len(worse) == 1 else "runs are"
        st.warning(f"▼ {len(worse)} {noun} significantly worse than the baseline on {md(metric)}: {listed}.",
                   icon=":material/trending_down:")
    else:
        st.caption(f"No run shown is significantly worse than its baseline on {md(metric)}.")
    st.caption(VERDICT_LEGEND + " Baseline: the run of its dataset tagged baseline, else the run before it.")
