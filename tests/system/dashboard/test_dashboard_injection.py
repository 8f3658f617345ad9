"""Dashboard text is text: probe strings planted in a run, its dataset, a trace and the URL render as
characters in a real Chromium, never as outside links, outside images or HTML.

The probes are what a stored query text or a crafted link could carry: a Markdown
link ("Click to re-login"), a Markdown image, raw HTML, a bare URL and an autolink,
all pointing at an outside host. Each page is checked for ``<img>`` elements and
resources from anywhere but the app, and ``<a>`` elements to anywhere but the app.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("chromium") is None,
                       reason="no chromium on PATH: run .ci/install-browser.sh (Debian chromium, chromium-driver)"),
]

EVIL = "evil.example"
PROBE = (f"[Click to re-login](https://{EVIL}/login) ![pixel](https://{EVIL}/p.png) "
         f"<img src=https://{EVIL}/x.png><a href=https://{EVIL}/h>html link</a> https://{EVIL}/bare "
         f"<https://{EVIL}/auto> www.{EVIL} :red[alert] $x$")
PROBE_RUN = "sample-graph-20250109T090000-probe"
IDLE = "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
OUTSIDE = """JSON.stringify({
  images: Array.from(document.images).map(i => i.currentSrc || i.src)
    .filter(s => s && !s.startsWith(location.origin) && !s.startsWith('data:') && !s.startsWith('blob:')),
  links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href)
    .filter(h => new URL(h, location.href).origin !== location.origin),
  resources: performance.getEntriesByType('resource').map(r => r.name).filter(n => n.includes('evil.example')),
  html: Array.from(document.querySelectorAll('[data-testid=stMarkdownContainer] a, [data-testid=stMarkdownContainer] img'))
    .filter(e => !(e.getAttribute('href') || '').startsWith('#')).map(e => e.outerHTML),  // not heading anchors
  exceptions: document.querySelectorAll('[data-testid=stException]').length,
  text: document.body.innerText})"""


def plant_trace(store_path: Path) -> str:
    """A search trace whose query, ids and skip reason are the probe; returns its id."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from searchtrace.traces import TraceStore
    from searchtrace.traces import vocabulary as v

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("probe")
    root = {v.INPUT_VALUE: PROBE, v.MODE: "graph", v.RUN_ID: PROBE_RUN, v.QUERY_ID: "test-001",
            v.RESULT_IDS: (PROBE, "bio-orsolya-venn"), v.RESULT_BANDS: ("high", "low"),
            v.RESULT_RELEVANCE: (0.9, 0.1), v.RETRY_BROADER: PROBE}
    with tracer.start_as_current_span("search", attributes=root) as span:
        with tracer.start_as_current_span("dense", attributes={v.SKIPPED: PROBE}):
            pass
        with tracer.start_as_current_span("keyword", attributes={v.CANDIDATE_IDS: (PROBE,), v.CANDIDATE_SCORES: (1.0,),
                                                                 v.CANDIDATE_COUNT: 1}):
            pass
        trace_id = format(span.get_span_context().trace_id, "032x")
    store = TraceStore(store_path)
    store.write(exporter.get_finished_spans())
    store.close()
    return trace_id


@pytest.fixture(scope="module")
def probe_home(dashboard_home, tmp_path_factory) -> Path:
    """A copy of the fixture home plus a run, its dataset and a trace that carry the probe."""
    from searchtrace.evals import RunFolder

    home = tmp_path_factory.mktemp("probe-home")
    shutil.copytree(dashboard_home / "runs", home / "runs")
    shutil.copy(dashboard_home / "traces.sqlite", home / "traces.sqlite")
    dataset = home / "dataset"
    shutil.copytree(Path(__file__).resolve().parents[3] / "datasets" / "sample", dataset)
    lines = (dataset / "queries.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    for row in rows:
        if row["_id"] == "test-001":
            row["text"] = PROBE
    (dataset / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    source = next(p for p in (home / "runs").iterdir() if p.name.endswith("-base"))
    shutil.copytree(source, home / "runs" / PROBE_RUN)
    folder = RunFolder(home / "runs" / PROBE_RUN)
    summary = folder.summary()
    folder.write_summary(replace(summary, run_id=PROBE_RUN, name=PROBE, tags=("probe", PROBE), note=PROBE,
                                 dataset=replace(summary.dataset, path=str(dataset))))
    plant_trace(home / "traces.sqlite")
    return home


@pytest.fixture(scope="module")
def probe_server(probe_home):
    from streamlit_server import serve

    with serve(probe_home) as url:
        yield url


def visit(browser, url: str, heading: str) -> dict:
    browser.open(url)
    browser.wait_for(f"{IDLE} && document.querySelector('h1')?.innerText.trim() === {json.dumps(heading)}")
    time.sleep(1.0)  # a rerun the page's own query-parameter update starts, and images that would load
    browser.wait_for(IDLE)
    return json.loads(browser.evaluate(OUTSIDE))


def inert(state: dict, where: str) -> None:
    assert state["exceptions"] == 0, (where, state["text"][:1500])
    assert state["images"] == [] and state["resources"] == [], (where, state["images"], state["resources"])
    assert state["links"] == [] and state["html"] == [], (where, state["links"], state["html"])


def test_planted_and_reflected_probes_render_as_text(probe_server, browser, run_ids):
    base = run_ids["base"]
    pages = [("runs", "", "Runs"),
             ("compare", f"compare?base={base}&cand={PROBE_RUN}", "Compare"),
             ("query", f"query?run={PROBE_RUN}&base={base}&query=test-001", "Query"),
             ("traces", "traces", "Traces"),
             ("query-url", f"query?run={base}&query={quote(PROBE)}", "Query"),
             ("traces-url", f"traces?trace={quote(PROBE)}&run={quote(PROBE)}", "Traces"),
             ("calibration-url", f"calibration?run={quote(PROBE)}", "Calibration"),
             ("compare-url", f"compare?base={quote(PROBE)}&cand={quote(PROBE)}", "Compare"),
             ("runs-url", f"?pick={quote(PROBE)}&tag={quote(PROBE)}&settings={quote(PROBE)}", "Runs")]
    shown = {}
    for name, path, heading in pages:
        state = visit(browser, f"{probe_server}/{path}", heading)
        inert(state, name)
        shown[name] = "[Click to re-login](https://evil.example/login)" in state["text"].replace("\u2060", "")
        if name == "query":  # the run's heading copies as its name: no invisible word joiners
            headings = json.loads(browser.evaluate("JSON.stringify(Array.from(document.querySelectorAll('h3'))"
                                                   ".map(h => h.innerText))"))
            assert f"Candidate: {' '.join(PROBE.split())}" in headings, headings
    # Where the probe is laid out as Markdown, it is shown character for character.
    assert shown["compare"] and shown["query"] and shown["traces"] and shown["query-url"], shown
    assert shown["runs-url"], shown  # the notice that the picked run is not shown names it as text

    browser.open(f"{probe_server}/")
    browser.wait_for(IDLE + " && document.querySelector('[class*=st-key-runs-table-]') !== null")
    browser.click_row("[class*=st-key-runs-table-]", 0)  # the probe run is the newest
    browser.wait_for("document.querySelector('.st-key-runs-open-compare button') !== null")
    state = json.loads(browser.evaluate(OUTSIDE))
    inert(state, "runs-selected")
    assert f"{PROBE.split(' ![')[0]} ![pixel]" in state["text"].replace("\u2060", "")
