"""Every dashboard page in a real headless Chromium at 800 and at 1,600 pixels wide (``dashboard.ui.layout``).

On each page: no label (a widget's label, a select's value, a button, a tab, a
heading) is cut or broken across lines inside a word; every chart is at least
300 pixels wide and on screen; each table's key columns (its name, its first
metric, its delta) are on screen without scrolling it sideways; the Query page's
two rankings either stand side by side with their first rows level or one above
the other. A select's value longer than :data:`PROSE` characters (a query's text)
is prose and may be cut at its end. Full-page screenshots go to
``$SEARCHTRACE_SCREENSHOTS`` when set (else a temporary folder) as
``layout-<page>-<width>.png``. Needs Debian's ``chromium`` (``.ci/install-browser.sh``).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from urllib.parse import quote

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("chromium") is None,
                       reason="no chromium on PATH: run .ci/install-browser.sh (Debian chromium, chromium-driver)"),
]

WIDTHS = (800, 1600)
CHART_MIN = 300  # px, as dashboard.ui.layout.CHART_MIN
PROSE = 40  # characters: a select's value longer than this is prose (a query's text), not a label
IDLE = "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
SAMPLE = Path(__file__).resolve().parents[3] / "datasets" / "sample"
CHARTED = {"runs", "compare", "query", "traces", "calibration", "latency"}  # pages that draw a chart here
POOL = [("test-001", "bio-orsolya-venn"), ("test-001", "gld-lampwrights-guild"), ("test-001", "bio-meribel-osk")]

#: What the page reads: labels cut or broken inside a word, charts' widths, tables' headers on screen, the
#: Query page's rankings. A table's headers are those Glide's grid renders (the columns at least partly in
#: view); when the grid scrolls sideways its last rendered column may be cut, so it does not count.
LAYOUT = r"""(() => {
  const main = document.querySelector('[data-testid=stMain]');
  const mainRight = main.getBoundingClientRect().right;
  const visible = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const problems = [];
  const LABELS = '[data-testid=stWidgetLabel] p, button, [role=tab], [data-tag] span[title], '
    + '[data-testid=stMetricLabel], [data-testid=stMetricValue], h1, h2, h3, [data-testid=stExpander] summary';
  const lines = rects => new Set(Array.from(rects).filter(r => r.width > 0).map(r => Math.round(r.top / 4))).size;
  const range = (node, start, end) => { const r = document.createRange(); r.setStart(node, start);
    r.setEnd(node, end); return r; };
  for (const e of main.querySelectorAll(LABELS)) {
    if (!visible(e)) continue;
    const words = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
    for (let n = words.nextNode(); n; n = words.nextNode()) {
      for (const m of n.data.matchAll(/\S{2,}/g)) {
        if (lines(range(n, m.index, m.index + m[0].length).getClientRects()) > 1) {
          problems.push({kind: 'broken', label: e.innerText.trim().slice(0, 80), word: m[0]}); }
      }
    }
    for (const d of [e, ...e.querySelectorAll('*')]) {  // an element clipping its text: where does it cut?
      if (getComputedStyle(d).overflowX === 'visible' || d.scrollWidth <= d.clientWidth + 1) continue;
      const right = d.getBoundingClientRect().right - parseFloat(getComputedStyle(d).paddingRight);
      const chars = document.createTreeWalker(d, NodeFilter.SHOW_TEXT);
      let text = '', shown = null;
      for (let n = chars.nextNode(); n; n = chars.nextNode()) {
        for (let i = 0; i < n.data.length; i++) {
          if (shown === null && range(n, i, i + 1).getBoundingClientRect().right > right + 0.5) shown = text;
          text += n.data[i];
        }
      }
      if (shown !== null && /\S$/.test(shown) && /\S/.test(text[shown.length])) {
        problems.push({kind: 'cut', label: text.slice(0, 80), shown}); }
    }
  }
  const pen = document.createElement('canvas').getContext('2d');
  for (const i of main.querySelectorAll('input[role=combobox]')) {  // a select's value: an input, clipped
    if (!visible(i) || !i.value || i.value.length > PROSE) continue;
    const s = getComputedStyle(i); pen.font = s.font;
    const room = i.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
    if (pen.measureText(i.value).width <= room) continue;
    let k = 0; while (k < i.value.length && pen.measureText(i.value.slice(0, k + 1)).width <= room) k++;
    if (/\S/.test(i.value[k - 1] || '') && /\S/.test(i.value[k])) {
      problems.push({kind: 'cut', label: i.getAttribute('aria-label'), shown: i.value.slice(0, k)}); }
  }
  const charts = Array.from(main.querySelectorAll('[data-testid=stVegaLiteChart]')).filter(visible).map(c => {
    const r = (c.querySelector('canvas, svg') || c).getBoundingClientRect();
    return {width: Math.round(r.width), onScreen: r.left >= 0 && r.right <= mainRight + 1}; });
  const tables = Array.from(main.querySelectorAll('[data-testid=stDataFrame]')).filter(visible).map(t => {
    const headers = Array.from(t.querySelectorAll('[role=columnheader]')).map(h => h.innerText.trim());
    const scroller = t.querySelector('.dvn-scroller');
    const sideways = !scroller || scroller.scrollWidth > scroller.clientWidth + 1;
    const right = t.getBoundingClientRect().right;
    return {headers, onScreen: sideways ? headers.slice(0, -1) : headers, inside: right <= mainRight + 1}; });
  const rankings = ['baseline', 'candidate'].map(s => document.querySelector(`.st-key-query-results-${s}-box`))
    .filter(Boolean).map(e => { const r = e.getBoundingClientRect();
      return {left: Math.round(r.left), top: Math.round(r.top), width: Math.round(r.width)}; });
  return {problems, charts, tables, rankings};
})()""".replace("PROSE", str(PROSE))


def pages(run_ids: dict[str, str], judged: Path) -> list[tuple[str, str, str, list[tuple[str, ...]]]]:
    """(name, path and query, a text the page shows once drawn, the key columns of its tables: each tuple
    must be on screen in one table, first column first) of every page."""
    base, fast, nodense = run_ids["base"], run_ids["fast"], run_ids["nodense"]
    return [
        ("runs", "runs", "Trend", [("name", "ndcg@10", "Δ ndcg@10", "vs baseline")]),
        ("compare", f"compare?base={base}&cand={fast}", "Most regressed queries",
         [("metric", "delta", "verdict"), ("query_id", "base ndcg@10", "cand. ndcg@10", "delta"),
          ("category", "base", "candidate", "delta")]),
        ("query", f"query?query=test-001&run={fast}&base={base}", "Gold documents",
         [("rank", "gold", "relevance", "band"), ("doc_id", "grade", "base rank", "cand. rank"),
          ("doc_id", "final rank", "lost at"), ("name", "date (UTC)", "mode", "ndcg@10")]),
        ("traces", "traces", "matching traces",
         [("start (UTC)", "status", "duration"), ("span", "duration"), ("rank", "doc_id", "title", "score")]),
        ("calibration", f"calibration?run={nodense}", "Reliability diagram", [("band", "precision", "count")]),
        ("latency", f"latency?run={nodense}", "Skipped stages did not run", [("stage", "skipped", "p50", "p95")]),
        ("judge", f"judge?dataset={quote(str(judged))}&judge=layout", "pairs done", []),
        ("implicit", "implicit", "Implicit judgments", []),
    ]


@pytest.fixture(scope="module")
def judged(tmp_path_factory) -> Path:
    """A copy of the sample with a pool of three pairs, for the Judge page."""
    from searchtrace.evals.labels.judgments import PooledPair
    from searchtrace.evals.labels.judgments.pool import Contribution

    root = tmp_path_factory.mktemp("layout-judge") / "mine"
    shutil.copytree(SAMPLE, root)
    lines = [PooledPair(q, d, (Contribution("layout", rank),)).to_json() for rank, (q, d) in enumerate(POOL, 1)]
    (root / "pool.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return root


@pytest.fixture(scope="module")
def server(dashboard_home):
    from streamlit_server import serve

    with serve(dashboard_home) as url:
        yield url


def read_whole_page(browser, path: Path, width: int) -> dict:
    """:data:`LAYOUT` read with the view as tall as the page (its main part scrolls; a table out of view
    renders no header), and a screenshot of the whole page then."""
    height = min(int(browser.evaluate("document.querySelector('[data-testid=stMain]').scrollHeight")), 8000)
    browser.call("Emulation.setDeviceMetricsOverride", width=width, height=max(height, 1000), deviceScaleFactor=1,
                 mobile=False)
    time.sleep(1.0)  # the charts and tables redraw
    try:
        seen = browser.evaluate(LAYOUT)
        assert browser.screenshot(path).stat().st_size > 10_000, path
        return seen
    finally:
        browser.call("Emulation.setDeviceMetricsOverride", width=width, height=1000, deviceScaleFactor=1,
                     mobile=False)


def on_screen(tables: list[dict], wanted: tuple[str, ...]) -> bool:
    """Whether one table shows ``wanted`` (its first column first) without being scrolled sideways."""
    return any(t["inside"] and t["onScreen"][:1] == [wanted[0]] and set(wanted) <= set(t["onScreen"])
               for t in tables)


def check_page(browser, url: str, name: str, text: str, keys: list[tuple[str, ...]], shot: Path,
               width: int) -> dict:
    """Open ``url``, wait until it shows ``text``, and check what every page must hold; what it read."""
    browser.open(url)
    browser.wait_for(f"{IDLE} && document.querySelector('h1') !== null"
                     f" && document.body.innerText.includes({json.dumps(text)})")
    time.sleep(1.0)  # a rerun the page's own query-parameter update starts
    browser.wait_for(IDLE)
    time.sleep(0.5)  # the charts draw
    assert browser.evaluate("document.querySelectorAll('[data-testid=stException]').length") == 0, name
    seen = read_whole_page(browser, shot, width)
    assert seen["problems"] == [], (name, width, seen["problems"])
    assert all(c["width"] >= CHART_MIN and c["onScreen"] for c in seen["charts"]), (name, width, seen["charts"])
    for wanted in keys:
        assert on_screen(seen["tables"], wanted), (name, width, wanted, seen["tables"])
    return seen


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_holds_at_the_width(server, run_ids, judged, shots, width):
    from headless_chromium import Chromium

    with Chromium(timeout_s=60, window=(width, 1000)) as browser:
        for name, path, text, keys in pages(run_ids, judged):
            seen = check_page(browser, f"{server}/{path}", name, text, keys, shots / f"layout-{name}-{width}.png",
                              width)
            assert bool(seen["charts"]) == (name in CHARTED), (name, seen["charts"])
            if name == "query":
                left, right = seen["rankings"]
                beside = right["left"] >= left["left"] + left["width"]
                assert (abs(left["top"] - right["top"]) <= 2) if beside else left["left"] == right["left"], \
                    (width, seen["rankings"])
                assert beside == (width >= 1600), (width, seen["rankings"])  # side by side where both fit


@pytest.mark.parametrize("width", WIDTHS)
def test_the_implicit_page_with_served_traffic_holds_at_the_width(served, shots, width):
    """The Implicit page with clicks to show: its click-through chart and its tables (the home above has
    no served search, so the page shows none there)."""
    from headless_chromium import Chromium
    from streamlit_server import serve

    home, dataset = served
    with serve(home) as url, Chromium(timeout_s=60, window=(width, 1000)) as browser:
        seen = check_page(browser, f"{url}/implicit?dataset={quote(str(dataset))}", "implicit", "Click-through",
                          [], shots / f"layout-implicit-served-{width}.png", width)
        assert len(seen["charts"]) >= 1 and len(seen["tables"]) >= 1, seen
