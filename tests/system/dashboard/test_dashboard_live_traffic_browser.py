"""Live traffic found under newer eval traces, in a real headless Chromium (issue 40): 50 served requests, then
600 eval searches after them, on the home's SQLite file and on the shared PostgreSQL store. The default list
(the newest searches) shows only eval traces; the "live traffic" preset, picked as a user picks it, lists the
50 served ones over the whole store. Screenshots go to ``$SEARCHTRACE_SCREENSHOTS`` when set. Needs Debian's
``chromium`` (and ``postgresql`` for the shared store)."""

from __future__ import annotations

import shutil

import pytest
from test_dashboard_browser import choose, settle, table
from trace_fixtures import MS, T0, FakeSearch, Served, record, record_served

from searchtrace.home import Home
from searchtrace.traces import open_trace_store

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("chromium") is None,
                       reason="no chromium on PATH: run .ci/install-browser.sh (Debian chromium, chromium-driver)"),
]

S = 1000 * MS
SERVED, EVALS = 50, 600
ROWS = "document.querySelectorAll('[class*=st-key-traces-table-] [role=row]').length > 1"
"""The list's grid has drawn its rows (it may lag the page's text by a frame)."""


@pytest.fixture(params=["sqlite", "postgres"])
def stored_home(request, tmp_path):
    """A home (and the environment naming its store) holding 50 served requests, then 600 eval searches."""
    home = tmp_path / "home"
    url = request.getfixturevalue("pg_db").url if request.param == "postgres" else None
    served, served_ids = record_served(*(Served(start_ns=T0 + i * S, shown=("d1", "d2"), query=f"served question {i}",
                                               source="http" if i % 2 else "mcp") for i in range(SERVED)))
    evals, _ = record(*(FakeSearch(start_ns=T0 + (SERVED + i) * S, run_id="run-1", query_id=f"q{i}", source="eval",
                                   dataset="sample") for i in range(EVALS)))
    store = open_trace_store(Home(home).traces, url)
    store.write(served)
    store.write(evals)
    store.close()
    return home, {"SEARCHTRACE_STORE": url.conninfo} if url else {}, served_ids, request.param


@pytest.fixture
def server(stored_home):
    from streamlit_server import serve

    home, env, _, _ = stored_home
    with serve(home, env=env) as url:
        yield url


def test_the_live_traffic_preset_finds_served_requests_under_newer_evals(server, browser, stored_home, shots):
    _, _, _, backend = stored_home
    browser.open(f"{server}/traces")
    state = settle(browser, "Traces", "matching traces")
    assert state["exceptions"] == 0, state["text"][:2000]
    assert f"{SERVED + EVALS:,} matching traces" in state["text"]  # every search, the served ones included
    browser.wait_for(ROWS)
    assert {r["source"] for r in table(browser, "traces-table-")} == {"eval"}  # the newest: evals only
    choose(browser, "tf-preset", "live traffic")
    state = settle(browser, "Traces", f"{SERVED} matching traces in the whole store")
    assert state["exceptions"] == 0, state["text"][:2000]
    browser.wait_for(ROWS)
    rows = table(browser, "traces-table-")
    assert rows and {r["source"] for r in rows} == {"http", "mcp"}
    assert rows[0]["query"] == f"served question {SERVED - 1}"  # the newest served request first
    assert "preset=live+traffic" in browser.evaluate("location.search")
    browser.screenshot(shots / f"live-traffic-{backend}.png")
