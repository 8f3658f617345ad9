"""What every page shares: the home folder, page paths, URL parameters and the run picker."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable, TypeVar

import pandas as pd
import streamlit as st

from searchtrace.dashboard.config import resolve_home
from searchtrace.dashboard.ui.text import md
from searchtrace.errors import SearchtraceError

T = TypeVar("T")

__all__ = ["CALIBRATION", "COMPARE", "IMPLICIT", "JUDGE", "LATENCY", "QUERY", "RUNS", "TRACES", "home", "load", "param", "remember", "restore",
           "run_label", "run_names", "runs_page", "select_run"]

# Page scripts, relative to app.py (what st.switch_page and AppTest.switch_page take). Not "pages/":
# Streamlit would also list that folder as pages of its own before st.navigation runs.
RUNS = "views/runs.py"
COMPARE = "views/compare.py"
QUERY = "views/query.py"
TRACES = "views/traces.py"
CALIBRATION = "views/calibration.py"
LATENCY = "views/latency.py"
JUDGE = "views/judge.py"
IMPLICIT = "views/implicit.py"


def home() -> Path:
    """The home folder the app was started on."""
    return resolve_home(sys.argv[1:], os.environ)


def param(name: str) -> str | None:
    """A URL query parameter, or None."""
    value = st.query_params.get(name)
    return value or None


def restore(page: str, names: tuple[str, ...], *, when_empty: bool = True) -> bool:
    """Make the URL name what ``page`` shows (its parameters are ``names``); True when it reopened the view
    this page showed last in this session (say so on the page).

    Streamlit's page switch leaves a history entry of the old page's path with the new page's parameters:
    Back lands there, on a URL holding another page's parameters. Such a URL (a parameter not among
    ``names``) is not a link to this page: the view this page showed last is reopened. So is it for a URL
    naming none of ``names`` (the sidebar's links carry no parameters), unless not ``when_empty`` (a page
    whose empty URL is a view of its own: all filters off) or the page's own widgets just emptied it (every
    choice back to its default). A URL with some of ``names`` and nothing else is a link, and is followed.
    """
    from searchtrace.dashboard.ui.url_state import OWN_WRITE

    own = st.session_state.pop(OWN_WRITE, False)
    remembered = st.session_state.get(f"last-view-{page}")
    present = set(st.query_params.keys())
    foreign = present - set(names)
    for name in foreign:
        del st.query_params[name]
    if remembered and (foreign or (when_empty and not own and not present & set(names))):
        for name in names:
            if name in remembered:
                st.query_params[name] = remembered[name]
            elif name in st.query_params:
                del st.query_params[name]
        return True
    return False


def remember(page: str, names: tuple[str, ...]) -> None:
    """Keep the URL's ``names`` as what ``page`` shows, for :func:`restore`."""
    st.session_state[f"last-view-{page}"] = {n: v for n in names if (v := st.query_params.get(n))}


def load(fn: Callable[..., T], *args: object, **kwargs: object) -> T:
    """Call a data function; a domain error (a run without its files, say) stops the page with its message."""
    try:
        return fn(*args, **kwargs)
    except SearchtraceError as exc:
        st.error(md(exc.message))
        st.stop()
        raise  # not reached: st.stop() raises


def run_label(runs: pd.DataFrame) -> Callable[[str], str]:
    """A selectbox label function (plain text): run name and date."""
    info = {r.run_id: f"{r.name}  ({r.created_at:%Y-%m-%d %H:%M})" for r in runs.itertuples()}
    return lambda run_id: info.get(run_id, run_id)


def run_names(runs: pd.DataFrame) -> dict[str, str]:
    """Each run's name, by run id."""
    return dict(zip(runs["run_id"], runs["name"]))


def select_run(runs: pd.DataFrame, label: str, key: str, url_param: str = "run", default: int = 0) -> str:
    """A run picker showing the URL's ``url_param`` (the source of truth: a link, a reload or Back reopens
    it); a choice is written back to the URL. Without the parameter it starts on run ``default``."""
    from searchtrace.dashboard.ui.url_state import url_selectbox

    options = runs["run_id"].tolist()
    fallback = options[min(default, len(options) - 1)]
    chosen = url_selectbox(st, label, options, key=key, param=url_param, default=fallback,
                           format_func=run_label(runs))
    if st.query_params.get(url_param) != chosen:
        st.query_params[url_param] = chosen  # the pair shown is always in the URL, a default one too
    return chosen


def runs_page(title: str) -> tuple[Path, pd.DataFrame]:
    """A page's title, the home folder and its runs; the page stops with a note when there are none."""
    from searchtrace.dashboard.ui import cached

    st.title(title)
    folder = home()
    runs = cached.list_runs(folder)
    if runs.empty:
        st.info("No completed runs yet.")
        st.stop()
    return folder, runs
