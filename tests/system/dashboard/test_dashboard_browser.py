"""The dashboard served by ``streamlit run`` and loaded in a real headless Chromium.

Each page must render its heading and its tables with no Streamlit exception
element, and the regression triage flow (Runs -> Compare -> the most regressed
query side by side -> its trace -> a retrieval stage's documents) must work by
mouse clicks, three of them from Compare to the documents. Screenshots (1600x1000)
go to ``$SEARCHTRACE_SCREENSHOTS`` when set (else a temporary folder). Needs
Debian's ``chromium`` (``.ci/install-browser.sh``).
"""

from __future__ import annotations

import shutil
import time
from dataclasses import replace
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("chromium") is None,
                       reason="no chromium on PATH: run .ci/install-browser.sh (Debian chromium, chromium-driver)"),
]

READY = ("document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
         " && document.querySelectorAll('[data-testid=stDataFrame]').length > 0")
STATE = """JSON.stringify({
  headings: Array.from(document.querySelectorAll('h1')).map(e => e.innerText.trim()),
  exceptions: document.querySelectorAll('[data-testid=stException]').length,
  dialogs: document.querySelectorAll('[role=dialog]').length,
  tables: document.querySelectorAll('[data-testid=stDataFrame]').length,
  charts: document.querySelectorAll('[data-testid=stVegaLiteChart]').length,
  text: document.body.innerText})"""


@pytest.fixture(scope="module")
def server(dashboard_home):
    """The dashboard on the fixture home; yields the base URL."""
    from streamlit_server import serve

    with serve(dashboard_home) as url:
        yield url


def pages(run_ids: dict[str, str]) -> list[tuple[str, str, str, str]]:
    """(name, path and query, heading, a text the page must show) of every page."""
    base, nodense = run_ids["base"], run_ids["nodense"]
    return [("runs", "", "Runs", "Trend"),  # the default page lives at the root
            ("compare", f"compare?base={base}&cand={nodense}", "Compare", "dense weight 1 → 0"),
            ("query", f"query?query=test-001&run={nodense}&base={base}", "Query", "Orsolya Venn"),
            ("traces", "traces", "Traces", "400 matching traces"),  # the newest: a run without dense
            ("calibration", f"calibration?run={nodense}", "Calibration", "rank-only"),
            ("latency", f"latency?run={nodense}", "Latency", "Skipped stages did not run")]


def test_every_page_renders_in_chromium(server, browser, shots, run_ids):
    import json

    for name, path, heading, text in pages(run_ids):
        browser.open(f"{server}/{path}")
        settle(browser, heading, text)
        browser.wait_for(READY)
        time.sleep(0.5)  # let the charts draw before the screenshot
        state = json.loads(browser.evaluate(STATE))
        shot = browser.screenshot(shots / f"dashboard-{name}.png")
        assert shot.stat().st_size > 10_000, name
        assert state["exceptions"] == 0, (name, state["text"][:2000])
        assert state["dialogs"] == 0, (name, state["text"][:500])  # e.g. Streamlit's "Page not found"
        assert state["headings"][0] == heading, (name, state["headings"])
        assert state["tables"] >= 1 and state["charts"] >= 1, (name, state)
        assert text in state["text"], (name, state["text"][:2000])


RUNS_TABLE = "[class*=st-key-runs-table-]"  # the key carries a digest of the rows shown (dashboard.ui.picks)
IDLE = "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
CELLS = """JSON.stringify(Array.from(document.querySelectorAll('%s [role=row]')).map(
  r => Array.from(r.querySelectorAll('[role=gridcell],[role=columnheader]')).map(c => c.innerText)))"""


def settle(browser, heading: str, text: str = "") -> dict:
    """Wait until the page titled ``heading`` has finished its script (and shows ``text``); its state."""
    import json

    browser.wait_for(f"{IDLE} && document.querySelector('h1')?.innerText.trim() === {json.dumps(heading)}"
                     f" && document.body.innerText.includes({json.dumps(text)})")
    time.sleep(0.8)  # a rerun the page's own query-parameter update starts
    browser.wait_for(IDLE)
    return json.loads(browser.evaluate(STATE))


def table(browser, box: str) -> list[dict[str, str]]:
    """The visible rows of the dataframe inside the element with class ``st-key-<box>`` (a ``box`` ending in
    ``-``: whose key starts so, as a picked table's does, :mod:`dashboard.ui.picks`), by column header."""
    import json

    rows = json.loads(browser.evaluate(CELLS % (f"[class*=st-key-{box}]" if box.endswith("-") else f".st-key-{box}")))
    header, body = rows[0], rows[1:]
    return [dict(zip(header[-len(r):], r)) for r in body]


def test_triage_flow_runs_compare_query_trace_documents(server, browser, shots, run_ids, dashboard_home,
                                                        sample_dataset):
    from searchtrace.dashboard.data import compare_runs, list_runs, side_by_side, span_documents, waterfall

    base, fast = run_ids["base"], run_ids["fast"]
    browser.open(f"{server}/")
    settle(browser, "Runs")
    row = list_runs(dashboard_home)["run_id"].tolist().index(fast)
    browser.click_row(RUNS_TABLE, row)
    browser.wait_for("document.querySelector('.st-key-runs-open-compare button') !== null")
    browser.screenshot(shots / "triage-1-runs.png")
    browser.click(".st-key-runs-open-compare button")
    state = settle(browser, "Compare", "Most regressed queries")
    assert "sample · fast against baseline sample · graph" in state["text"] and "mode graph → fast" in state["text"]
    browser.screenshot(shots / "triage-2-compare.png")

    clicks = 0
    worst = compare_runs(dashboard_home, base, fast, n_resamples=100).regressed["ndcg@10"].iloc[0]
    listed = table(browser, "compare-queries-regressed")
    assert listed[0]["query_id"] == worst["query_id"] and listed[0]["query"] == worst["text"]
    browser.click_row(".st-key-compare-queries-regressed", 0)
    clicks += 1
    state = settle(browser, "Query", worst["text"])
    assert f"query={worst['query_id']}" in browser.evaluate("location.search")
    pair = side_by_side(dashboard_home, base, fast, worst["query_id"])
    gold = {r["doc_id"]: r for r in table(browser, "query-gold-box")}
    assert set(gold) == set(pair.gold["doc_id"])
    for doc in pair.gold.itertuples(index=False):  # both ranks of each gold document, as run.trec has them
        assert (gold[doc.doc_id]["base rank"], gold[doc.doc_id]["cand. rank"]) == (
            str(doc.base_rank) if doc.base_rank is not None else "", str(doc.candidate_rank))
    assert "Baseline: sample · graph" in state["text"] and "Candidate: sample · fast" in state["text"]
    browser.screenshot(shots / "triage-3-query.png")

    browser.click(".st-key-query-open-trace-candidate button")
    clicks += 1
    state = settle(browser, "Traces", "Span tree")
    trace_id = pair.candidate.trace_id
    assert f"trace={trace_id}" in browser.evaluate("location.search")
    assert worst["text"] in state["headings"] or worst["text"] in state["text"]
    browser.screenshot(shots / "triage-4-trace.png")

    view = waterfall(dashboard_home, trace_id)
    dense = view.spans["name"].tolist().index("dense")
    browser.click_row("[class*=st-key-traces-spans-]", dense)
    clicks += 1
    settle(browser, "Traces", "Span: dense")
    expected = span_documents(dashboard_home, view, str(view.spans["span_id"].iloc[dense]))
    shown = table(browser, "traces-documents-box")
    assert len(shown) >= 5
    for got, want in zip(shown, expected.itertuples(index=False)):
        assert (got["doc_id"], got["title"]) == (want.doc_id, want.title)
    titles = {d.id: d.title for d in sample_dataset.docs}
    assert all(titles[r["doc_id"]] == r["title"] for r in shown)
    browser.screenshot(shots / "triage-5-documents.png")
    assert clicks <= 3


def test_server_listens_on_loopback_only(server):
    table = Path("/proc/net/tcp")
    if not table.exists():
        pytest.skip("needs Linux /proc/net/tcp")
    port = int(server.rsplit(":", 1)[1])
    listening = [line.split()[1] for line in table.read_text().splitlines()[1:]
                 if line.split()[3] == "0A" and int(line.split()[1].split(":")[1], 16) == port]
    assert listening == [f"0100007F:{port:04X}"]


def choose(browser, key: str, text: str) -> None:
    """Pick ``text`` in the selectbox or multiselect ``key`` as a user does: type it and press Enter."""
    browser.click(f".st-key-{key} input")
    browser.call("Input.insertText", text=text)
    for kind in ("keyDown", "keyUp"):
        browser.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13)


def picked_name(browser) -> str | None:
    """The bold name the Runs page shows for its picked run (None without a pick)."""
    return browser.evaluate("""(() => { const b = document.querySelector('[data-testid=stMarkdown] strong');
        return document.querySelector('.st-key-runs-open-compare') && b ? b.innerText : null; })()""")


def test_runs_pick_then_filter_keeps_the_run_by_id_or_clears_it(server, browser, run_ids, dashboard_home):
    from searchtrace.dashboard.data import list_runs

    listed = list_runs(dashboard_home)["run_id"].tolist()
    fast, nodense = run_ids["fast"], run_ids["nodense"]
    browser.open(f"{server}/")
    settle(browser, "Runs")
    browser.click_row(RUNS_TABLE, listed.index(fast))  # third of four rows
    browser.wait_for("document.querySelector('.st-key-runs-open-compare') !== null")
    assert picked_name(browser) == "sample · fast" and f"pick={fast}" in browser.evaluate("location.search")
    choose(browser, "runs-settings", "mode=fast")  # keeps it, now the only row: picked by id, not position
    state = settle(browser, "Runs", "1 of 4 runs")
    assert state["exceptions"] == 0 and picked_name(browser) == "sample · fast"
    browser.open(f"{server}/?tag=ablation&pick={fast}")  # a filter that hides the pick
    state = settle(browser, "Runs", "1 of 4 runs")
    assert state["exceptions"] == 0 and "not among the rows shown" in state["text"]
    assert picked_name(browser) is None and "pick=" not in browser.evaluate("location.search")
    browser.open(f"{server}/")
    settle(browser, "Runs", "4 of 4 runs")
    browser.click_row(RUNS_TABLE, listed.index(fast))
    browser.wait_for("document.querySelector('.st-key-runs-open-compare') !== null")
    choose(browser, "runs-tag", "ablation")  # today: an IndexError, or the buttons act on the run now at row 2
    state = settle(browser, "Runs", "1 of 4 runs")
    assert state["exceptions"] == 0, state["text"][:2000]
    assert "not among the rows shown" in state["text"] and picked_name(browser) is None
    browser.click_row(RUNS_TABLE, 0)
    browser.wait_for("document.querySelector('.st-key-runs-open-compare') !== null")
    assert picked_name(browser) == "no dense, rrf"
    search = browser.evaluate("location.search")
    assert f"pick={nodense}" in search and "tag=ablation" in search


def test_back_and_forward_reopen_the_same_pair_query_and_trace(server, browser, run_ids, dashboard_home):
    """Runs -> Compare -> Query -> Trace, then Back to Runs and Forward to the trace: every page shows what it
    showed. (Streamlit's page switch leaves an extra entry, the old page's path with the new page's
    parameters, so a Back may show the same view twice; never another one.)"""
    from searchtrace.dashboard.data import compare_runs, list_runs, side_by_side

    base, fast = run_ids["base"], run_ids["fast"]
    browser.open(f"{server}/")
    settle(browser, "Runs")
    browser.click_row(RUNS_TABLE, list_runs(dashboard_home)["run_id"].tolist().index(fast))
    browser.wait_for("document.querySelector('.st-key-runs-open-compare button') !== null")
    browser.click(".st-key-runs-open-compare button")
    settle(browser, "Compare", "Most regressed queries")
    worst = compare_runs(dashboard_home, base, fast, n_resamples=100).regressed["ndcg@10"].iloc[0]
    browser.click_row(".st-key-compare-queries-regressed", 0)
    settle(browser, "Query", worst["text"])
    browser.click(".st-key-query-open-trace-candidate button")
    settle(browser, "Traces", "Span tree")
    trace_id = side_by_side(dashboard_home, base, fast, worst["query_id"]).candidate.trace_id
    expected = {  # what each page must show: a text, and the parameters its URL must carry
        "Runs": ("sample · fast", [f"pick={fast}"]),
        "Compare": ("sample · fast against baseline sample · graph", [f"base={base}", f"cand={fast}"]),
        "Query": (worst["text"], [f"query={worst['query_id']}", f"run={fast}", f"base={base}"]),
        "Traces": ("Span tree", [f"trace={trace_id}"]),
    }

    def walk(direction: str, order: list[str]) -> None:
        for heading in order:
            for _ in range(3):  # the same view may come twice (see the docstring); never another
                browser.evaluate(f"history.{direction}()")
                time.sleep(1.0)
                browser.wait_for(IDLE)
                import json

                state = json.loads(browser.evaluate(STATE))
                assert state["exceptions"] == 0, state["text"][:1000]
                now = state["headings"][0]
                assert now in expected, now
                text, params = expected[now]
                state = settle(browser, now, text)
                search = browser.evaluate("location.search")
                assert all(p in search for p in params), (now, search)
                if now == heading:
                    break
            assert now == heading, (direction, heading, now)

    walk("back", ["Query", "Compare", "Runs"])
    walk("forward", ["Compare", "Query", "Traces"])


def test_a_span_link_pasted_into_a_fresh_browser_opens_that_span(server, browser, run_ids, dashboard_home):
    from headless_chromium import Chromium

    from searchtrace.dashboard.data import SEARCHES, list_traces, waterfall

    trace_id = list_traces(dashboard_home, replace(SEARCHES, limit=3))["trace_id"].iloc[2]
    spans = waterfall(dashboard_home, trace_id).spans
    browser.open(f"{server}/traces?trace={trace_id}")
    settle(browser, "Traces", "Span tree")
    browser.click_row("[class*=st-key-traces-spans-]", spans["name"].tolist().index("keyword"))
    settle(browser, "Traces", "Span: keyword")
    link = browser.evaluate("location.href")
    assert f"trace={trace_id}" in link and "span=" in link
    with Chromium(timeout_s=60) as fresh:  # another browser: no session, only the link
        fresh.open(link)
        state = settle(fresh, "Traces", "Span: keyword")
        assert state["exceptions"] == 0 and trace_id in state["text"]


def test_traces_pick_then_filter_never_shows_another_trace(server, browser, run_ids, dashboard_home):
    from searchtrace.dashboard.data import SEARCHES, list_traces

    listed = list_traces(dashboard_home, replace(SEARCHES, limit=200))
    row = int((listed["run_id"] == run_ids["base"]).to_numpy().argmax())  # a trace of base, not of fast
    picked = listed["trace_id"].iloc[row]
    browser.open(f"{server}/traces")
    settle(browser, "Traces", "Span tree")
    browser.click_row("[class*=st-key-traces-table-]", row)
    browser.wait_for(f"location.search.includes('trace={picked}')")
    choose(browser, "tf-run", "sample · fast")  # hides it: today an IndexError, or another trace opens
    state = settle(browser, "Traces", "not among the rows shown")
    assert state["exceptions"] == 0, state["text"][:2000]
    assert f"trace={picked}" not in browser.evaluate("location.search")
    assert "No trace picked: the newest listed is shown" in state["text"]


SIDEBAR_LINK = "[data-testid=stSidebarNav] a[href$='/%s']"


def test_runs_has_its_own_address_and_one_back_press_returns_to_the_page_before(server, browser):
    """/runs opens Runs (the sidebar's link goes there); a sidebar move to any page adds one history entry, not
    two: the page filling in its own parameters replaces it (``dashboard.ui.history``), so Back from every page
    returns to the page before it at once."""
    import json

    browser.open(f"{server}/runs")
    state = settle(browser, "Runs", "Trend")
    assert state["dialogs"] == 0 and "Page not found" not in state["text"], state["text"][:500]
    assert browser.evaluate(f"document.querySelector({json.dumps(SIDEBAR_LINK % 'runs')}) !== null")
    length = browser.evaluate("history.length")
    walk = (("compare", "Compare", "Most regressed queries"),  # fills in base and cand
            ("query", "Query", "Gold documents"), ("traces", "Traces", "matching traces"),
            ("calibration", "Calibration", "Reliability diagram"),  # fills in run
            ("latency", "Latency", ""), ("judge", "Judge", "Dataset"), ("implicit", "Implicit judgments", "Dataset"),
            ("runs", "Runs", "Trend"))  # every page
    for page, heading, text in walk:
        browser.click(SIDEBAR_LINK % page)
        settle(browser, heading, text)
        assert browser.evaluate("location.pathname").endswith(f"/{page}")
        length += 1
        assert browser.evaluate("history.length") == length, page  # one entry per move
    compare_search = None
    for heading, path in [(h, f"/{p}") for p, h, _ in walk[-2::-1]] + [("Runs", "/runs")]:
        browser.evaluate("history.back()")
        state = settle(browser, heading)  # one press: the page before, never the same page again
        assert state["exceptions"] == 0 and browser.evaluate("location.pathname").endswith(path)
        if heading == "Compare":
            compare_search = browser.evaluate("location.search")
    assert compare_search and "base=" in compare_search and "cand=" in compare_search


def test_triage_from_runs_to_the_query_page_in_at_most_four_clicks(server, browser, run_ids, dashboard_home):
    from searchtrace.dashboard.data import compare_runs, list_runs

    base, fast = run_ids["base"], run_ids["fast"]
    browser.open(f"{server}/runs")
    settle(browser, "Runs", "Trend")
    clicks = 0
    browser.click_row(RUNS_TABLE, list_runs(dashboard_home)["run_id"].tolist().index(fast))
    clicks += 1
    browser.wait_for("document.querySelector('.st-key-runs-open-compare button') !== null")
    browser.click(".st-key-runs-open-compare button")  # "Compare with its baseline"
    clicks += 1
    state = settle(browser, "Compare", "Most regressed queries")
    assert "sample · fast against baseline sample · graph" in state["text"]
    worst = compare_runs(dashboard_home, base, fast, n_resamples=100).regressed["ndcg@10"].iloc[0]
    browser.click_row(".st-key-compare-queries-regressed", 0)
    clicks += 1
    settle(browser, "Query", worst["text"])
    search = browser.evaluate("location.search")
    assert all(p in search for p in (f"query={worst['query_id']}", f"run={fast}", f"base={base}")), search
    assert clicks <= 4
