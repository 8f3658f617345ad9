"""Implicit: the judgments agents' fetches make (``judge implicit``), kept apart from people's labels, with the
click-through rate by position, the agreement with the human and imported labels, and a recompute."""

import streamlit as st

from searchtrace.dashboard.data import implicit
from searchtrace.dashboard.ui import charts, context
from searchtrace.dashboard.ui.judge_parts import pick_dataset
from searchtrace.dashboard.ui.text import METRIC_FORMAT, md, show_table
from searchtrace.dashboard.ui.url_state import url_number_input

st.title("Implicit judgments")
VIEW = ("dataset", "min")
if context.restore("implicit", VIEW):
    st.caption("The dataset shown last in this session (the link named none).")
home = context.home()
dataset = pick_dataset(home, "implicit", "its served traffic is judged")
st.caption("A document an agent fetched after a search (get_docs, get_chunks, /v1/docs, /v1/chunks) is a click at "
           "the position the search showed it; clicks over the clicks an average result gets at those positions "
           "(COEC) grade the pair. These labels are the judge implicit:coec's, kind implicit: never mixed with "
           "people's, and exported only on request (judge export --kind implicit).")
left, right = st.columns([2, 1], vertical_alignment="bottom")
min_impressions = int(url_number_input(left, "Fewest impressions a judged pair needs", key="implicit-min", param="min",
                                       default=1, min_value=1, max_value=1000))
context.remember("implicit", VIEW)


@st.cache_data(ttl=300, show_spinner="Reading the traces…", max_entries=16)
def _view(home: str, dataset: str, min_impressions: int, stamp: object) -> implicit.ImplicitView:
    return implicit.implicit_view(home, dataset, min_impressions, stamp)


CONFIRM = "implicit-confirm"  # the recompute asked for, waiting for its confirmation (the dataset it was asked for)
DONE = "implicit-written"  # what the confirmed recompute wrote, said once
if right.button("Recompute implicit judgments…", key="implicit-recompute", type="secondary",
                help="asks first: it writes the grades that changed since the last run and retracts the pairs no "
                     "longer judged"):
    st.session_state[CONFIRM] = dataset
if st.session_state.get(CONFIRM) == dataset:
    # writing labels is not undone by a click: say what will be written, and where, before doing it
    st.warning(f"Recompute writes implicit labels (judge implicit:coec) to the judgments of {md(dataset)}: "
               "grades that changed are recorded and pairs no longer judged retracted. Write them?")
    yes, no, _ = st.columns([1, 1, 3])
    if yes.button("Write the labels", key="implicit-recompute-confirm", type="primary"):
        del st.session_state[CONFIRM]
        done = context.load(implicit.recompute, home, dataset, min_impressions)
        st.session_state[DONE] = (f"{done.written:,} judgments written: {done.added:,} added, {done.changed:,} "
                                  f"changed, {done.retracted:,} retracted ({done.unchanged:,} unchanged).")
        st.rerun()  # the page again without the question, saying what was written
    elif no.button("Cancel", key="implicit-recompute-cancel"):
        del st.session_state[CONFIRM]
        st.rerun()
if DONE in st.session_state:
    st.success(st.session_state.pop(DONE))
counts = context.load(implicit.label_counts, dataset)
for column, kind in zip(st.columns(3), ("human", "imported", "implicit")):
    column.metric(f"standing {kind} labels", f"{counts.get(kind, 0):,}")
view = context.load(_view, str(home), dataset, min_impressions, implicit.stamp(home, dataset))
if view.report is None:
    st.info(md(view.message))
    st.stop()
report = view.report
c = report.counts
st.subheader("What the traces hold")
cells = st.columns(5)
for cell, (label, value) in zip(cells, (("searches", c.impressions), ("fetches", c.fetches), ("clicks", c.clicks),
                                        ("unknown trace ids", c.unknown_traces), ("unattributed", c.unattributed))):
    cell.metric(label, f"{value:,}")
if c.unknown_traces:
    st.caption(f"{c.unknown_traces:,} fetches named a trace the store does not hold: "
               + ", ".join(md(t[:12]) for t in c.unknown_examples) + " (counted, never a judgment).")
st.subheader("Click-through rate by position")
st.altair_chart(charts.ctr_by_position(implicit.ctr_table(report)), width="stretch")
st.subheader("Pairs judged now")
grades = ", ".join(f"{g}: {n:,}" for g, n in report.grade_counts().items()) or "none"
st.caption(f"{len(report.pairs):,} pairs (grades {md(grades)}); against the standing implicit labels: "
           f"{report.added:,} new, {report.changed:,} changed, {report.retracted:,} no longer judged. "
           "Recompute writes them.")
show_table(st, implicit.pair_table(report), hide_index=True, key="implicit-pairs", column_config={
    "expected": st.column_config.NumberColumn(format=METRIC_FORMAT),
    "coec": st.column_config.NumberColumn(format=METRIC_FORMAT)})
st.subheader("Agreement")
a = report.agreement
if a is None:
    st.info("No pair judged from clicks has a human or imported label yet.")
else:
    def shown(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.3f}"

    st.caption(f"On {a.pairs:,} pairs with the {md(a.reference)}: Cohen's kappa {shown(a.cohen)} (grades), "
               f"{shown(a.binary)} (relevant or not); Krippendorff's alpha {shown(a.alpha)} (ordinal). "
               "Rows: the reference's grade; columns: the implicit one.")
    show_table(st, implicit.confusion_table(a), key="implicit-confusion")
