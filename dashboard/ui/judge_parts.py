"""Sections of the Judge page: the dataset picker, the queue of pairs, the pair shown, and the disagreements."""

from __future__ import annotations

import re
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from searchtrace.dashboard.data.judging import (
    PairView,
    Progress,
    dataset_label,
    disagreements,
    pair_view,
    progress,
    queue,
)
from searchtrace.dashboard.ui import cached, context, judging
from searchtrace.dashboard.ui.query_help import help_for
from searchtrace.dashboard.ui.text import MEDIUM, md, show_table
from searchtrace.dashboard.ui.url_state import seed, write_param
from searchtrace.evals import DEFAULT_TTL_S, JudgingFolder, JudgingSession

__all__ = ["pick_dataset", "show_disagreements", "show_pair", "show_queue"]

Pair = tuple[str, str]
SHORTCUTS = {"skip": "S", "undo": "U", "next": "N"}  # grades are their digits
_BLANK = re.compile(r"\n\s*\n")
DATASET = "dataset"  # the URL parameter of the dataset folder judged
#: Grade buttons' hues: the worst grade red, the best green, those between spread evenly (any scale's size).
WORST_HUE, BEST_HUE = 0, 120


def pick_dataset(home: Path, page: str = "judge", hint: str = "its pool.jsonl is the queue") -> str:
    """A dataset folder: one the home's runs scored, or a path typed (which wins); the page stops until one is valid.

    The folder is the URL's ``dataset`` (a link opens it, a choice writes it); one that is not a dataset
    folder stops the page with a one-line error naming it, under the pickers.

    Args:
        page: the widgets' key prefix (``judge-dataset``, ``judge-dataset-path``).
        hint: what the note asking for a dataset says of it.
    """
    known = cached.dataset_folders(home)
    first = known[0] if known else None
    wanted = st.query_params.get(DATASET) or None
    box, path = f"{page}-dataset", f"{page}-dataset-path"
    seed(box, wanted if wanted in known else first)
    seed(path, wanted if wanted and wanted not in known else "")
    chosen = st.selectbox("Dataset", known, key=box, on_change=lambda: write_param(DATASET, st.session_state[box], first),
                          format_func=dataset_label,
                          placeholder="no dataset folder with a pool or a run here: type its path below")
    typed = st.text_input("Or a dataset folder's path", key=path,
                          on_change=lambda: write_param(DATASET, st.session_state[path].strip()))
    folder = typed.strip() or chosen
    if not folder:
        st.info(f"Pick a dataset, or type the path of a dataset folder ({hint}).")
        st.stop()
    return str(context.load(JudgingFolder.at, folder).root.resolve())


def _markdown(view: PairView) -> str:
    """The document's text as Markdown: escaped, the query's terms in bold, paragraphs kept."""
    out = []
    for piece, term in view.text:
        out.append(f"**{md(piece)}**" if term else _escaped(piece))
    return "".join(out)


def _escaped(piece: str) -> str:
    """``piece`` escaped (:func:`md`), a blank line kept as a paragraph break, a space at either end kept."""
    return "\n\n".join(_inline(part) for part in _BLANK.split(piece))


def _inline(text: str) -> str:
    core = md(text)
    if not core:
        return " " if text else ""
    return (" " if text[:1].isspace() else "") + core + (" " if text[-1:].isspace() else "")


def show_pair(view: PairView) -> None:
    """The query, then the document: title, whole text with the query's terms in bold, metadata."""
    st.markdown(f"#### Query: {md(view.query or view.query_id)}")
    st.caption(f"query {md(view.query_id)} · document {md(view.doc_id)}")
    with st.container(border=True, key="judge-document"):
        st.markdown(f"##### {md(view.title or '(untitled)')}")
        if view.found:
            st.markdown(_markdown(view) or "*(no text)*")
        else:
            st.warning("This document is not in the dataset's corpus.jsonl (or the file is too large to show).")
        if view.metadata:
            st.caption(" · ".join(f"{md(k)}: {md(v)}" for k, v in view.metadata))


def _progress(p: Progress, judge: str) -> None:
    st.progress(p.done / p.total if p.total else 1.0,
                text=f"{p.done:,} of {p.total:,} pairs done · {p.queries_done:,} of {p.queries:,} queries · "
                     f"{p.mine:,} judged by {md(judge)}")
    st.caption("Progress: " + help_for("pairs_done"))
    if p.query_total:
        st.caption(f"This query: {p.query_done} of {p.query_total} pairs done", help=help_for("query_done"))


def grade_colours(values: list[int]) -> dict[int, str]:
    """A distinct colour per grade, the worst red to the best green (dark enough for white text); a scale's
    grades can be any number of integers, so the hues are spread over them rather than taken from a list."""
    n = len(values)
    step = (BEST_HUE - WORST_HUE) / (n - 1) if n > 1 else 0
    return {v: f"hsl({round(WORST_HUE + i * step if n > 1 else BEST_HUE)}, 70%, 34%)"
            for i, v in enumerate(sorted(values))}


def _grade_style(values: list[int], prefix: str) -> None:
    """Each grade button in its own colour (by its key's CSS class), so grades are told apart at a glance."""
    rules = "".join(f".st-key-{prefix}-{v} button {{background-color: {c} !important; border-color: {c} !important;"
                    f" color: #fff !important;}}" for v, c in grade_colours(values).items())
    st.html(f"<style>{rules}</style>")


def _buttons(session: JudgingSession, dataset: str, pair: Pair, judge: str) -> None:
    """The grade buttons, skip and undo, under the passage (the judge reads, then grades), and the note."""
    scale = session.scale
    _grade_style([v for v, _ in scale.grades], "judge-grade")
    columns = st.columns(len(scale.grades) + 2)
    for column, (value, _) in zip(columns, scale.grades):
        column.button(judging.grade_label(scale, value), key=f"judge-grade-{value}", type="secondary",
                      shortcut=str(value) if 0 <= value <= 9 else None, width="stretch",
                      on_click=judging.grade, args=(session, dataset, pair, value, judge, "judge-note"))
    columns[-2].button("Skip", key="judge-skip", shortcut=SHORTCUTS["skip"], width="stretch",
                       on_click=judging.skip, args=(dataset, pair))
    _undo(columns[-1], session, dataset, judge)
    st.text_input("Note (optional, saved with the grade)", key="judge-note")


def _undo(where: DeltaGenerator, session: JudgingSession, dataset: str, judge: str) -> None:
    where.button("Undo", key="judge-undo", shortcut=SHORTCUTS["undo"], width="stretch", on_click=judging.undo,
                 args=(session, dataset, judge), disabled=not judging.queue_state(dataset).judged,
                 help="retract your last judgment made here and show its pair again")


def _query_done(session: JudgingSession, dataset: str, judge: str, state: judging.QueueState, p: Progress) -> None:
    skipped = sum(pair[0] == state.query for pair in state.skipped)
    held = p.query_total - p.query_done - skipped
    if held > 0:
        st.info(f"Other judges hold the {held} other pairs of query {md(state.query)} left.")
    else:
        st.success(f"Every pair of query {md(state.query)} is done" + (f" but {skipped} skipped." if skipped else "."))
    left, middle, right, _ = st.columns([1, 1, 1, 2])
    left.button("Next query", key="judge-next-query", type="primary", shortcut=SHORTCUTS["next"],
                on_click=judging.next_query, args=(dataset,))
    _undo(middle, session, dataset, judge)
    if skipped:
        right.button("Back to the skipped", key="judge-revisit", on_click=judging.revisit_skipped, args=(dataset,))


def _said_undone(dataset: str) -> None:
    """After an undo, what it took back: the query, the document and the grade."""
    undone = judging.take_undone(dataset)
    if undone is not None:
        query, doc, grade = undone
        st.success(f"Undone: your grade {grade} of document {md(doc)} for query {md(query)}; the pair is shown "
                   "again.", icon="↩️")


def show_queue(session: JudgingSession, dataset: str, judge: str) -> None:
    """The next pair of the pool for ``judge`` (held for them), its grade buttons, and progress."""
    _said_undone(dataset)
    pool = context.load(queue, dataset)
    state = judging.queue_state(dataset)
    per_pair = int(st.number_input("Judges per pair", 1, 10, 1, key="judge-per-pair",
                                   help=help_for("judges_per_pair")))
    pair = session.next_pair(judge, pool.candidates(state.query, state.skipped, state.first), DEFAULT_TTL_S, per_pair)
    if pair is not None and state.query is None:
        state.query = pair[0]
    done = progress(session.tally, pool, judge, per_pair, state.query)
    _progress(done, judge)
    if pair is None:
        if state.query is None:
            st.success("Nothing left to judge in this pool for you (pairs others hold come back when their hold ends).")
            _undo(st.columns(4)[0], session, dataset, judge)
        else:
            _query_done(session, dataset, judge, state, done)
        return
    show_pair(context.load(pair_view, dataset, pair))
    _buttons(session, dataset, pair, judge)


def show_disagreements(session: JudgingSession, dataset: str, judge: str) -> None:
    """Pairs judged differently, each judge's grade and note, and grade buttons that record an adjudication."""
    pending = st.toggle("Only pairs not adjudicated yet", value=True, key="judge-disputes-pending")
    table = disagreements(session.tally.refresh(), dataset, pending_only=pending)
    st.caption(f"{len(table)} pairs whose judges gave different grades"
               " · an adjudication is a grade recorded with a note starting 'adjudication'")
    if table.empty:
        return
    show_table(st, table, hide_index=True, key="judge-disputes", column_config={
        "grades": st.column_config.TextColumn("grades", help=help_for("grades")),
        "adjudicated": st.column_config.NumberColumn("adjudicated", help=help_for("adjudicated")),
        "query": st.column_config.TextColumn("query", width=MEDIUM),
        "title": st.column_config.TextColumn("title", width=MEDIUM),
        "notes": st.column_config.TextColumn("notes", width="large")})
    labels = {f"{r.query_id} · {r.doc_id}": (r.query_id, r.doc_id) for r in table.itertuples()}
    picked = st.selectbox("Adjudicate", list(labels), key="judge-dispute-pick")
    pair = labels[picked]
    show_pair(context.load(pair_view, dataset, pair))
    st.text_input("Adjudication note (optional)", key="judge-adjudication-note")
    _grade_style([v for v, _ in session.scale.grades], "judge-adjudicate")
    columns = st.columns(len(session.scale.grades))
    for column, (value, _) in zip(columns, session.scale.grades):
        column.button(judging.grade_label(session.scale, value), key=f"judge-adjudicate-{value}", width="stretch",
                      on_click=judging.adjudicate, args=(session, pair, value, judge, "judge-adjudication-note"))
