"""Judge: the pool's pairs one at a time for a named judge (blind: no score, rank, band or system), and the
pairs judges disagree on, to adjudicate."""

import streamlit as st

from searchtrace.dashboard.ui import context, judging
from searchtrace.dashboard.ui.judge_parts import pick_dataset, show_disagreements, show_queue
from searchtrace.dashboard.ui.text import md
from searchtrace.dashboard.ui.url_state import url_segmented

st.title("Judge")
VIEW = ("dataset", "view", judging.JUDGE_PARAM)
if context.restore("judge", VIEW):
    st.caption("The dataset judged last in this session (the link named none).")
dataset = pick_dataset(context.home())
context.remember("judge", VIEW)  # the dataset, before the page asks for a name
judge = judging.ask_judge_name("judge", in_url=True)
if judge is None:
    st.stop()
session = context.load(judging.judging_session, dataset)
left, right = st.columns([3, 1])
view = url_segmented(left, "View", ["Pairs", "Disagreements"], default="Pairs", key="judge-view", param="view",
                     label_visibility="collapsed")
context.remember("judge", VIEW)
right.caption(f"judging as **{md(judge)}**")
if right.button("Not you?", key="judge-forget-name", type="tertiary"):
    judging.forget_judge_name()
    st.rerun()
if view == "Disagreements":
    show_disagreements(session, dataset, judge)
else:
    show_queue(session, dataset, judge)
