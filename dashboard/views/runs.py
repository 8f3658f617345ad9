"""Runs: every run by name with the settings that differ between them, its delta against its baseline (a
regression flagged in words), filters, and trends per settings group on run order."""

import streamlit as st

from searchtrace.dashboard.data import damaged_runs, differing_settings, gone_runs, metric_names, run_order
from searchtrace.dashboard.ui import cached, charts, context
from searchtrace.dashboard.ui.explain import FIGURES, explain, legend
from searchtrace.dashboard.ui.layout import key_columns_first
from searchtrace.dashboard.ui.picks import pick_row
from searchtrace.dashboard.ui.runs_parts import delta_columns, flag_regressions, styled_runs
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
left, middle, right, last = st.columns([1, 1, 2, 1])
dataset = url_selectbox(left, "Dataset", ["all", *datasets], key="runs-dataset", param="dataset")
tag = url_selectbox(middle, "Tag", ["all", *tags], key="runs-tag", param="tag")
wanted = url_multiselect(right, "Settings", choices, key="runs-settings", param="settings",
                         placeholder="any settings")
metric = url_selectbox(last, "Metric", metrics, key="trend-metric", param="metric", default="ndcg@10",
                       help="The delta against the baseline and the trend show this metric.\n\n" + legend(metrics))

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
deltas = context.load(cached.run_deltas, home, runs, metric)
baseline_of = dict(zip(deltas["run_id"], deltas["baseline"]))
names = context.run_names(runs)
pairs = [(r, baseline_of.get(r)) for r in shown["run_id"]]
table["compare"] = [app_url("compare", base=b, cand=r) if b else None for r, b in pairs]
table["queries view"] = [app_url("query", run=r, base=b) for r, b in pairs]
table = delta_columns(table.reset_index(drop=True), deltas, names)
flag_regressions(deltas, names, metric, shown["run_id"].tolist())
st.caption(f"{len(shown)} of {len(runs)} runs, newest first. After the name: its {md(metric)}, the delta "
           "against its baseline and the verdict; after the date: the baseline and the settings that differ "
           "between these runs. Select a row to open its comparison with its baseline.")
number = st.column_config.NumberColumn
picked_id = pick_row(
    styled_runs(table), shown["run_id"].tolist(), key="runs-table", param="pick", what="run", hide_index=True,
    height=min(50 + 35 * len(table), 560),
    column_order=key_columns_first(table.columns, "name", metric, "delta", "vs baseline", "p", "created_at"),
    column_config={"name": st.column_config.TextColumn("name", pinned=True, width=MEDIUM),
                   "created_at": st.column_config.DatetimeColumn("date (UTC)", format="YYYY-MM-DD HH:mm"),
                   "baseline": st.column_config.TextColumn("baseline", help=FIGURES["baseline"]),
                   "delta": number(f"Δ {metric}", format="%+.3f", help=FIGURES["delta"]),
                   "vs baseline": st.column_config.TextColumn("vs baseline", help=FIGURES["verdict"]),
                   "p": st.column_config.TextColumn("p", help=FIGURES["p-value"]),
                   **{m: number(m, format=METRIC_FORMAT, help=explain(m)) for m in metrics},
                   "wall_s": number("wall s", format="%.1f", help="Wall-clock seconds the whole eval took."),
                   "compare": st.column_config.LinkColumn("compare", display_text="vs baseline"),
                   "queries view": st.column_config.LinkColumn("queries", display_text="queries")})

context.remember("runs", VIEW)
if picked_id is not None:
    picked = shown.set_index("run_id", drop=False).loc[picked_id]
    st.markdown(f"**{md(picked['name'])}**" + (f": {md(picked['note'])}" if picked["note"] else ""))
    buttons = st.columns(3)
    run_id, baseline = str(picked["run_id"]), baseline_of.get(picked["run_id"])
    if buttons[0].button("Compare with its baseline", key="runs-open-compare", disabled=baseline is None,
                         type="primary", help=FIGURES["baseline"]):
        st.switch_page(context.COMPARE, query_params={"base": str(baseline), "cand": run_id})
    if buttons[1].button("Its queries", key="runs-open-query"):
        params = {"run": run_id} | ({"base": str(baseline)} if baseline else {})
        st.switch_page(context.QUERY, query_params=params)
    if buttons[2].button("Its traces", key="runs-open-traces"):
        st.switch_page(context.TRACES, query_params={"run": run_id})

st.header("Trend")
left, _right = st.columns(2)
trend_dataset = url_selectbox(left, "Dataset", datasets, key="trend-dataset", param="trend",
                              default=dataset if dataset in datasets else None)
context.remember("runs", VIEW)
points = run_order(cached.trend(home, trend_dataset, metric))
st.caption(f"{md(metric)} of each run of the dataset in run order (1 = its oldest run; runs seconds apart stand "
           "one step apart). One line per group of runs with identical settings (mode and the settings that "
           "differ from the defaults), so a change of settings is not read as a change over time.")
st.altair_chart(charts.trend(points, metric), width="stretch")
