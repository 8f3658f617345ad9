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
from searchtrace.dashboard.ui.text import md  # noqa: E402
from searchtrace.dashboard.ui.warmup import warm_up  # noqa: E402

st.set_page_config(page_title="searchtrace", layout="wide")
# Runs lives at /runs, the sidebar's link too; the app's root shows the same page through a hidden default
# (a default page is served only at the root, so /runs would be "Page not found"). Runs is listed first, so
# st.switch_page(context.RUNS) opens /runs.
pages = [
    st.Page(context.RUNS, title="Runs", url_path="runs"),
    st.Page(context.COMPARE, title="Compare", url_path="compare"),
    st.Page(context.QUERY, title="Query", url_path="query"),
    st.Page(context.TRACES, title="Traces", url_path="traces"),
    st.Page(context.CALIBRATION, title="Calibration", url_path="calibration"),
    st.Page(context.LATENCY, title="Latency", url_path="latency"),
    st.Page(context.JUDGE, title="Judge", url_path="judge"),
    st.Page(context.IMPLICIT, title="Implicit", url_path="implicit"),
    st.Page(context.RUNS, title="Runs", url_path="start", default=True, visibility="hidden"),
]
keep_history_clean()  # a page filling in its own URL adds no history entry
st.sidebar.caption(f"home: {md(context.home())}")
if (shared := data.shared_store()) is not None:  # traces, runs and judgments from the team's store
    st.sidebar.caption(f"store: {md(shared.masked())}")
    if problem := data.store_problem():
        st.sidebar.warning(problem, icon=":material/cloud_off:")
st.navigation(pages).run()
warm_up()  # after the first page's script: its imports are not slowed down
