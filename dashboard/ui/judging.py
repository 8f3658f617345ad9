"""Judging from the dashboard: one session per dataset and process, the judge's name, and what each click does.

A click appends its judgment through :class:`JudgingSession.record` before the
page reruns (a button's callback), so nothing waits in the browser session to be
saved: the session state holds only the judge's name, the query shown, the
pairs skipped and the pairs judged here (for undo).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st

from searchtrace.dashboard.data import shared_store
from searchtrace.evals import ADJUDICATION, JudgingSession, Scale

__all__ = ["JUDGE_KEY", "JUDGE_PARAM", "QueueState", "forget_judge_name", "take_undone", "adjudicate", "ask_judge_name", "grade", "grade_label", "judging_session",
           "next_query", "queue_state", "revisit_skipped", "skip", "undo"]

JUDGE_KEY = "judge-name"
JUDGE_PARAM = "judge"  # the URL parameter that keeps the judge's name across reloads
_STATES = "judge-queues"
Pair = tuple[str, str]


@st.cache_resource(show_spinner=False, max_entries=16)
def _session(folder: str, scale_mtime_ns: int, store: str | None) -> JudgingSession:
    return JudgingSession.open(folder, store=store)


def judging_session(dataset: str) -> JudgingSession:
    """The dataset's session, shared by this process's browser sessions (its tally is read once, then followed).

    Raises:
        NotFoundError: no such folder. DataError: a ``judging.toml`` that is no scale.
    """
    folder = Path(dataset).resolve()
    scale = folder / "judging.toml"
    url = shared_store()  # judgments and the judge queue in the shared store, when there is one
    return _session(str(folder), scale.stat().st_mtime_ns if scale.is_file() else -1, url.conninfo if url else None)


def _cleaned(name: str) -> str | None:
    """A judge's name with its spaces collapsed, or None when it is no non-empty printable line."""
    cleaned = " ".join(name.split())
    return cleaned if cleaned and cleaned.isprintable() else None


def ask_judge_name(prefix: str, in_url: bool = False) -> str | None:
    """The judge's name, kept for the browser session; asked once (a text box and a button) until given.

    ``in_url``: the page keeps the name in its URL too (``?judge=``, among the parameters it owns), so a
    reload or a bookmark keeps it; a page that does not own that parameter would drop it from its URL.
    """
    name = st.session_state.get(JUDGE_KEY) or (_cleaned(str(st.query_params.get(JUDGE_PARAM) or ""))
                                               if in_url else None)
    if name:
        st.session_state[JUDGE_KEY] = name
        if in_url and st.query_params.get(JUDGE_PARAM) != name:
            st.query_params[JUDGE_PARAM] = name
        return str(name)
    typed = st.text_input("Your name, recorded with each judgment", key=f"{prefix}-name-input",
                          placeholder="e.g. ana")
    if st.button("Start judging", key=f"{prefix}-name-start", type="primary"):
        cleaned = _cleaned(typed)
        if cleaned:
            st.session_state[JUDGE_KEY] = cleaned
            if in_url:
                st.query_params[JUDGE_PARAM] = cleaned
            st.rerun()
        st.error("The name must be a non-empty line of printable characters.")
    return None


def forget_judge_name() -> None:
    """"Not you?": the name leaves the session and the URL, so the page asks again."""
    st.session_state.pop(JUDGE_KEY, None)
    if JUDGE_PARAM in st.query_params:
        del st.query_params[JUDGE_PARAM]


@dataclass
class QueueState:
    """Where a judge is in one dataset's queue (this browser session only)."""

    query: str | None = None
    skipped: list[Pair] = field(default_factory=list)
    first: Pair | None = None
    judged: list[Pair] = field(default_factory=list)
    undone: tuple[str, str, int] | None = None  # the last judgment undone (query, document, grade), said once


def queue_state(dataset: str) -> QueueState:
    states = st.session_state.setdefault(_STATES, {})
    return states.setdefault(dataset, QueueState())


def _note(key: str) -> str | None:
    note = " ".join(str(st.session_state.get(key) or "").split())
    st.session_state[key] = ""
    return note or None


def grade(session: JudgingSession, dataset: str, pair: Pair, value: int, judge: str, note_key: str,
          trace_id: str | None = None) -> None:
    """A grade button's callback: append the judgment (with the note typed, then cleared), remember it for undo."""
    session.record(*pair, value, judge, note=_note(note_key), trace_id=trace_id)
    state = queue_state(dataset)
    state.judged.append(pair)
    if state.first == pair:
        state.first = None


def skip(dataset: str, pair: Pair) -> None:
    """Set the pair aside for this browser session (the next one is handed out; the hold moves to it)."""
    queue_state(dataset).skipped.append(pair)


def undo(session: JudgingSession, dataset: str, judge: str) -> None:
    """Retract the judge's latest judgment made here that still stands, and show its pair next."""
    state = queue_state(dataset)
    tally = session.tally.refresh()
    while state.judged:
        pair = state.judged.pop()
        standing = tally.label(pair, judge)
        if standing is not None:
            session.record(*pair, None, judge)
            session.queue.release(judge)
            state.query, state.first = pair[0], pair
            state.undone = (*pair, int(standing.grade)) if standing.grade is not None else None
            return


def take_undone(dataset: str) -> tuple[str, str, int] | None:
    """The judgment the last undo retracted (query, document, grade), once: the page says it after the undo."""
    state = queue_state(dataset)
    undone, state.undone = state.undone, None
    return undone


def next_query(dataset: str) -> None:
    """Leave the query shown: the next pair handed out picks the next query."""
    state = queue_state(dataset)
    state.query, state.first = None, None


def revisit_skipped(dataset: str) -> None:
    """Hand out this query's skipped pairs again."""
    state = queue_state(dataset)
    state.skipped = [p for p in state.skipped if p[0] != state.query]


def adjudicate(session: JudgingSession, pair: Pair, value: int, judge: str, note_key: str) -> None:
    """An adjudication button's callback: the judge's grade, its note starting ``adjudication``."""
    note = _note(note_key)
    session.record(*pair, value, judge, note=f"{ADJUDICATION}: {note}" if note else ADJUDICATION)


def grade_label(scale: Scale, value: int) -> str:
    """A grade button's label: the grade and its name."""
    return f"{value} · {dict(scale.grades)[value]}"
