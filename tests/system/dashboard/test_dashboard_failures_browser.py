"""Failures first, in a real headless Chromium at 1400x1000 (issue 27): on a home of live traffic (a model
load, command-line and served searches, failures), an error span shows its message, and a model load is not
listed as a search. Screenshots go to ``$SEARCHTRACE_SCREENSHOTS`` when set. Needs Debian's ``chromium``."""

from __future__ import annotations

import shutil

import pytest
from test_dashboard_browser import settle, table

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("chromium") is None,
                       reason="no chromium on PATH: run .ci/install-browser.sh (Debian chromium, chromium-driver)"),
]


@pytest.fixture(scope="module")
def narrow_browser():
    """Headless Chromium at the issue's 1400x1000."""
    from headless_chromium import Chromium

    with Chromium(timeout_s=60, window=(1400, 1000)) as chromium:
        yield chromium


@pytest.fixture(scope="module")
def live_server(live_home):
    from streamlit_server import serve

    with serve(live_home["home"]) as url:
        yield url


def test_an_error_span_shows_its_message(live_server, narrow_browser, live_home, shots):
    from searchtrace.dashboard.data import waterfall

    message = "top_k: must be between 1 and 500, got 0"
    narrow_browser.open(f"{live_server}/traces?trace={live_home['refused']}")
    state = settle(narrow_browser, "Traces", "Span tree")
    assert state["exceptions"] == 0
    assert f"Failed in validate: {message} (3 spans in error)" in state["text"]  # the trace's header
    assert "root POST /v1/search · HTTP 400" in state["text"]
    narrow_browser.screenshot(shots / "failures-1-error-trace.png")
    spans = waterfall(live_home["home"], live_home["refused"]).spans["name"].tolist()
    narrow_browser.click_row("[class*=st-key-traces-spans-]", spans.index("validate"))
    state = settle(narrow_browser, "Traces", "Span: validate")
    assert f"Ended in error: {message}" in state["text"]
    assert f"Exception searchtrace.errors.ValidationError: {message}" in state["text"]
    assert "Traceback (most recent call last)" in state["text"]  # the exception's stack, expanded
    narrow_browser.screenshot(shots / "failures-2-error-span.png")


def test_a_model_load_is_not_in_the_search_list(live_server, narrow_browser, live_home, shots):
    narrow_browser.open(f"{live_server}/traces")
    state = settle(narrow_browser, "Traces", "matching traces")
    assert "4 matching traces" in state["text"]  # two command-line and two served searches
    rows = table(narrow_browser, "traces-table-")
    assert len(rows) == 4 and {r["root span"] for r in rows} == {"search", "POST /v1/search"}
    assert {r["source"] for r in rows} == {"cli", "http"} and {r["status"] for r in rows} == {"ok", "error"}
    assert sum(r["cold"] == "❄" for r in rows) == 1  # the first search after the load
    narrow_browser.screenshot(shots / "failures-3-search-list.png")


def test_the_latency_page_shows_served_traffic(live_server, narrow_browser, shots):
    narrow_browser.open(f"{live_server}/latency")
    state = settle(narrow_browser, "Latency", "Per stage")
    assert state["exceptions"] == 0 and state["tables"] == 2 and state["charts"] == 2  # and latency over time
    assert "Per source" in state["text"] and "requests and searches" in state["text"]
    narrow_browser.screenshot(shots / "failures-4-served-traffic.png")
