"""Runs: every run by name with the settings that differ between them, filters, and trends per settings group."""

import streamlit as st

from searchtrace.dashboard.data import damaged_runs, differing_settings, gone_runs, metric_names
from searchtrace.dashboard.ui import cached, charts, context
from searchtrace.dashboard.ui.picks import pick_row
from searchtrace.dashboard.ui.text import MEDIUM, METRIC_FORMAT, app_url, md
from searchtrace.dashboard.ui.url_state import url_multiselect, url_selectbox
from searchtrace.home import Home

st.title("Runs")
VIEW = ("pick", "dataset", "tag", "settings", "trend", "metric")  # trend, metric: the trend chart's
context.restore("runs", VIEW, when_empty=False)  # no parameter: every run, no filter
home = context.home()
runs = cached.list_runs(home)
for damaged in damaged_runs(home).itertuples():
    st.warning(f"Run {md(damaged.run_id)} is not listed: its run.json cannot be read ({md(damaged.error)}).")
for gone in gone_runs(home):
    st.info(f"The run folder {md(gone)} (written with eval \\-\\-out) is gone: moved or deleted. Its line in "
            f"{md(Home(home).runs_outside)} can be removed.")
if runs.empty:
    st.info(f"No completed runs in {md(home / 'runs')} yet: searchtrace eval DATASET \\-\\-home {md(home)} "
            "writes one.")
    st.stop()

settings = cached.settings_table(home)
metrics = metric_names(runs)
datasets = sorted(runs["dataset"].dropna().unique())
tags = sorted({t.strip() for value in runs["tags"] for t in str(value).split(",") if t.strip()})
varying = differing_settings(settings, runs["run_id"].tolist())
choices = [f"{c}={v}" for c in varying for v in sorted(settings[c].dropna().unique())]
left, middle, right = st.columns([1, 1, 2])
dataset = url_selectbox(left, "Dataset", ["all", *datasets], key="runs-dataset", param="dataset")
tag = url_selectbox(middle, "Tag", ["all", *tags], key="runs-tag", param="tag")
wanted = url_multiselect(right, "Settings", choices, key="runs-settings", param="settings",
                         placeholder="any settings")

shown = runs
if dataset != "all":
    shown = shown[shown["dataset"] == dataset]
if tag != "all":
    shown = shown[shown["tags"].map(lambda value: tag in [t.strip() for t in str(value).split(",")])]
for choice in wanted:
    key, _, value = choice.partition("=")
    shown = shown[shown["run_id"].map(lambda r, k=key, v=value: settings.at[r, k] == v if r in settings.index else False)]
columns = differing_settings(settings, shown["run_id"].tolist())
table = shown[["name", "created_at", "dataset"]].copy()
for column in columns:
    table[column] = shown["run_id"].map(settings[column])
for column in [*metrics, "queries", "errors", "wall_s", "tags", "note", "run_id"]:
    table[column] = shown[column]
table["compare"] = [app_url("compare", base=p, cand=r) if p else None for r, p in zip(shown["run_id"], shown["previous"])]
table["queries view"] = [app_url("query", run=r, base=p) for r, p in zip(shown["run_id"], shown["previous"])]
table = table.reset_index(drop=True)
st.caption(f"{len(shown)} of {len(runs)} runs, newest first. Columns after the date: the settings that differ "
           "between these runs. Select a row to open its comparison with the previous run of its dataset.")
number = st.column_config.NumberColumn
picked_id = pick_row(
    table, shown["run_id"].tolist(), key="runs-table", param="pick", what="run", hide_index=True,
    height=min(50 + 35 * len(table), 560),
    column_config={"name": st.column_config.TextColumn("name", pinned=True, width=MEDIUM),
                   "created_at": st.column_config.DatetimeColumn("date (UTC)", format="YYYY-MM-DD HH:mm", pinned=True),
                   **{m: number(m, format=METRIC_FORMAT) for m in metrics},
                   "wall_s": number("wall s", format="%.1f"),
                   "compare": st.column_config.LinkColumn("compare", display_text="vs previous"),
                   "queries view": st.column_config.LinkColumn("queries", display_text="queries")})

context.remember("runs", VIEW)
if picked_id is not None:
    picked = shown.set_index("run_id", drop=False).loc[picked_id]
    st.markdown(f"**{md(picked['name'])}**" + (f": {md(picked['note'])}" if picked["note"] else ""))
    buttons = st.columns(3)
    previous = picked["previous"]
    if buttons[0].button("Compare with the previous run", key="runs-open-compare", disabled=previous is None,
                         type="primary"):
        st.switch_page(context.COMPARE, query_params={"base": previous, "cand": picked["run_id"]})
    if buttons[1].button("Its queries", key="runs-open-query"):
        params = {"run": picked["run_id"]} | ({"base": previous} if previous else {})
        st.switch_page(context.QUERY, query_params=params)
    if buttons[2].button("Its traces", key="runs-open-traces"):
        st.switch_page(context.TRACES, query_params={"run": picked["run_id"]})

st.header("Trend")
left, right = st.columns(2)
trend_dataset = url_selectbox(left, "Dataset", datasets, key="trend-dataset", param="trend",
                              default=dataset if dataset in datasets else None)
metric = url_selectbox(right, "Metric", metrics, key="trend-metric", param="metric", default="ndcg@10")
context.remember("runs", VIEW)
points = cached.trend(home, trend_dataset, metric)
st.caption("One line per group of runs with identical settings (mode and the settings that differ from the "
           "defaults), so a change of settings is not read as a change over time.")
st.altair_chart(charts.trend(points, metric), width="stretch")
