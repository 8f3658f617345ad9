"""The Traces page's judging section: each result of the open trace graded in place, into its dataset's store."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from searchtrace.dashboard.data.trace_judging import TraceResults, trace_results
from searchtrace.dashboard.data.traces import Waterfall
from searchtrace.dashboard.ui import context, judging
from searchtrace.dashboard.ui.text import md
from searchtrace.evals import JudgingFolder, JudgingSession

__all__ = ["show_trace_judging"]

NOTE_KEY = "traces-judge-note"


def _folder(info: TraceResults) -> str | None:
    """The dataset folder judgments go to: the trace's (a choice when several fit), else one typed."""
    if len(info.folders) > 1:
        return str(st.selectbox("Dataset folder", info.folders, key="traces-judge-dataset"))
    if info.folders:
        return info.folders[0]
    typed = st.text_input(f"Dataset folder of {md(info.dataset or 'this search')} (no run of this home scored it)",
                          key="traces-judge-path")
    if not typed.strip():
        return None
    return str(context.load(JudgingFolder.at, typed.strip()).root.resolve())


def _result(session: JudgingSession, folder: str, info: TraceResults, query_id: str, i: int, judge: str) -> None:
    doc, title = info.results[i]
    pair = (query_id, doc)
    current = session.tally.label(pair, judge)
    grades = session.scale.grades
    text, *buttons = st.columns([6] + [1] * len(grades), vertical_alignment="center")
    mine = f" · your grade **{current.grade}**" if current is not None else ""
    text.markdown(f"{md(title or '(untitled)')} · {md(doc)}{mine}")
    for column, (value, name) in zip(buttons, grades):
        column.button(str(value), key=f"traces-judge-{i}-{value}", help=md(name), width="stretch",
                      type="primary" if current is not None and current.grade == value else "secondary",
                      on_click=judging.grade, args=(session, folder, pair, value, judge, NOTE_KEY, info.trace_id))


def show_trace_judging(home: Path, view: Waterfall) -> None:
    """An expander with every result of the trace and a button per grade (the judgment records the trace id)."""
    info = trace_results(home, view)
    if not info.results:
        return
    with st.expander(f"Judge these {len(info.results)} results", expanded=False):
        query_id = info.query_id
        if query_id is None:
            st.info("This trace recorded no query text, so its results cannot be keyed to a query.")
            return
        judge = judging.ask_judge_name("traces-judge")
        folder = _folder(info) if judge is not None else None
        if judge is None or folder is None:
            return
        session = context.load(judging.judging_session, folder)
        session.tally.refresh()
        st.caption(f"query id {md(info.query_id)} · judged as {md(judge)} into {md(Path(folder).name)}/judgments.jsonl"
                   f" with this trace's id · grades: {md(session.scale.describe())}")
        for i in range(len(info.results)):
            _result(session, folder, info, query_id, i, judge)
        st.text_input("Note (optional, saved with the next grade)", key=NOTE_KEY)
