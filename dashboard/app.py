"""The searchtrace dashboard: ``streamlit run dashboard/app.py -- --home DIR`` (or ``searchtrace dashboard``)."""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

try:
    import searchtrace  # noqa: F401  (installed with the project)
except ImportError:  # run from a checkout that is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from searchtrace.dashboard import data  # noqa: E402
from searchtrace.dashboard.ui import context  # noqa: E402
from searchtrace.dashboard.ui.history import keep_history_clean  # noqa: E402
from searchtrace.dashboard.ui.layout import apply_layout  # noqa: E402
from searchtrace.dashboard.ui.text import md  # noqa: E402
from searchtrace.dashboard.ui.warmup import warm_up  # noqa: E402

st.set_page_config(page_title="searchtrace", layout="wide")


def _root() -> None:
    """The app's root opens Runs, its parameters kept (old links to ``/?pick=…`` still work). Runs itself
    lives at /runs: a default page is served only at the root, so /runs would be "Page not found"; and the
    root runs no copy of the page, whose widgets would then be another page's. ``ui.history`` replaces the
    root's history entry, so Back never lands on this redirect."""
    st.switch_page(runs, query_params={k: st.query_params.get_all(k) for k in st.query_params})


runs = st.Page(context.RUNS, title="Runs", url_path="runs")
pages = [
    runs,
    st.Page(context.COMPARE, title="Compare", url_path="compare"),
    st.Page(context.QUERY, title="Query", url_path="query"),
    st.Page(context.TRACES, title="Traces", url_path="traces"),
    st.Page(context.CALIBRATION, title="Calibration", url_path="calibration"),
    st.Page(context.LATENCY, title="Latency", url_path="latency"),
    st.Page(context.JUDGE, title="Judge", url_path="judge"),
    st.Page(context.IMPLICIT, title="Implicit", url_path="implicit"),
    st.Page(_root, title="Runs", url_path="start", default=True, visibility="hidden"),
]
keep_history_clean()  # a page filling in its own URL adds no history entry
apply_layout()  # every page holds from 800 to 1,600 pixels wide
st.sidebar.caption(f"home: {md(context.home())}")
if (shared := data.shared_store()) is not None:  # traces, runs and judgments from the team's store
    st.sidebar.caption(f"store: {md(shared.masked())}")
    if problem := data.store_problem():
        st.sidebar.warning(problem, icon=":material/cloud_off:")
st.navigation(pages).run()
warm_up()  # after the first page's script: its imports are not slowed down
