"""Dashboard page loads with 100,000 traces and 50 runs in the home.

Builds a home: one real ``searchtrace eval`` run on datasets/sample (graph
mode, with its 100 traces), 49 copies of it with perturbed per-query metrics,
latencies and dates (run.json means recomputed from the perturbed values), and
100,000 synthetic searches from ``bench_trace_store.Synth`` in the trace store,
spread over the 30 days before the home was built. With ``--live``, those
synthetic searches are labelled live traffic (source http, mcp, cli or python in
turn; ``Synth`` records none), for the Latency page's served-traffic view; the
code before that view ignores the label.
Then, for each page, times (median of ``--repeats``):

* data: the page's calls into :mod:`dashboard.data`, uncached;
* AppTest cold: the page script through Streamlit's AppTest with the
  ``st.cache_data`` caches cleared (data load + layout + serialization);
* AppTest warm: a rerun with the caches full (what a widget change costs);
* browser (with ``--browser``): ``streamlit run`` + headless Chromium, until
  the script finished and the tables are in the DOM: a full load of the first
  page on a fresh server, then each page through its sidebar link, first with
  its data uncached, then cached (see :func:`browser_ms`).

Prints measured figures only.

    python benchmarks/bench_dashboard.py [--dir DIR] [--traces 100000] [--runs 50] [--browser]
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Callable

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "datasets" / "sample"
APP = REPO / "dashboard" / "app.py"
SOURCE = "sample-graph-20250601T000000-source"


# --- building the home ---------------------------------------------------------------


def real_run(home: Path) -> Path:
    from searchtrace.evals import EvalSettings, RunFolder, run_eval
    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.traces import TraceSettings

    out = home / "runs" / SOURCE
    if RunFolder(out).is_complete:
        return out
    return run_eval(EvalSettings(dataset=str(SAMPLE), mode="graph"), resolve_config(home=home, environ={}),
                    out=out, progress=False, trace_settings=TraceSettings.resolve(environ={})).path


def perturbed_copy(source: Path, target: Path, rng: np.random.Generator, when: datetime) -> None:
    """A copy of a run with noisy metrics and latencies, as another run of the same settings might give."""
    from dataclasses import replace

    from searchtrace.evals import RunFolder, latency_stage

    shutil.copytree(source, target)
    folder = RunFolder(target)
    summary = folder.summary()
    frame = folder.per_query()
    metrics = list(summary.metrics)
    shift = rng.normal(0, 0.05)
    for m in metrics:
        noisy = frame[m] + shift + rng.normal(0, 0.05, len(frame))
        frame[m] = noisy.clip(0, 1).where(frame[m].notna())
    scale = rng.lognormal(0, 0.3)
    for column in [c for c in frame.columns if latency_stage(str(c)) is not None]:
        frame[column] = frame[column] * scale * rng.lognormal(0, 0.1, len(frame))
    folder.write_tables(frame, folder.results())
    folder.write_summary(replace(
        summary, run_id=target.name,
        retriever=replace(summary.retriever, mode="graph" if rng.random() < 0.7 else "fast"),
        metrics={m: round(float(frame[m].mean()), 6) for m in metrics},
        latency_ms={s: replace(p, p50=round(p.p50 * scale, 3), p95=round(p.p95 * scale, 3), p99=round(p.p99 * scale, 3))
                    for s, p in summary.latency_ms.items()}))
    stamp = when.timestamp()
    os.utime(target / "run.json", (stamp, stamp))


def label_live(path: Path) -> int:
    """Give the synthetic searches (no run, no source) a live source in turn; returns how many were labelled."""
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        with conn:
            n = conn.execute("UPDATE traces SET source = CASE abs(start_ns) % 4 WHEN 0 THEN 'http' WHEN 1 THEN 'mcp' "
                             "WHEN 2 THEN 'cli' ELSE 'python' END WHERE source IS NULL AND run_id IS NULL "
                             "AND root_name = 'search'").rowcount
    finally:
        conn.close()
    return n


def build_home(home: Path, n_runs: int, n_traces: int, live: bool = False) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_trace_store import Synth, fill

    from searchtrace.home import Home
    from searchtrace.traces.store.sqlite import TraceStore

    t = time.perf_counter()
    source = real_run(home)
    print(f"real run: {time.perf_counter() - t:.1f} s")
    start = datetime(2025, 1, 1, tzinfo=UTC)
    for i in range(n_runs - 1):
        rng = np.random.default_rng(i)  # per copy, so a rebuilt home names its copies the same
        when = start + timedelta(days=3 * i, hours=int(rng.integers(0, 24)))
        target = home / "runs" / f"sample-graph-{when:%Y%m%dT%H%M%S}-bench{i:02d}"
        if not target.exists():
            perturbed_copy(source, target, rng, when)
    store = TraceStore(Home(home).traces).open()
    have = store.count()
    if have < n_traces:
        t = time.perf_counter()
        fill(store, Synth(100, seed=1), n_traces - have, 512)
        print(f"traces: {n_traces - have:,} written in {time.perf_counter() - t:.1f} s")
    if live:
        print(f"live traffic: {label_live(Home(home).traces):,} synthetic searches given a source")
    print(f"home {home}: {len(list((home / 'runs').iterdir()))} runs, {store.count():,} traces, "
          f"{Home(home).traces.stat().st_size / 2**20:,.0f} MiB store")
    store.close()


# --- what each page loads ------------------------------------------------------------


#: Widgets a page variant sets before it is timed: (kind, key, value).
FOUR_FILTERS = (("selectbox", "tf-mode", "graph"), ("selectbox", "tf-band", "low"), ("selectbox", "tf-noconf", "yes"),
                ("text_input", "tf-text", "ferry"))
SERVED = (("segmented_control", "latency-view", "served traffic"),)  # its default window: the last hour
SERVED_DAY = (*SERVED, ("selectbox", "latency-window", "last 24 h"))
SERVED_ALL = (*SERVED, ("selectbox", "latency-window", "all"))


def page_loads(home: Path) -> dict[str, tuple[str, Callable[[], object], dict[str, str], tuple]]:
    """Page name -> (script, the page's data calls, URL parameters, widgets to set first)."""
    from searchtrace.dashboard import data

    runs = data.list_runs(home)
    newest, older = runs["run_id"].iloc[0], runs["run_id"].iloc[1]
    query_id = data.per_query(home, newest, ["query_id"])["query_id"].iloc[0]
    first = data.list_traces(home, replace(data.SEARCHES, limit=1))["trace_id"].iloc[0]
    real = data.list_traces(home, replace(data.SEARCHES, run_id=SOURCE, limit=1))["trace_id"].iloc[0]
    real_view = data.waterfall(home, real)
    assert real_view is not None
    doc_id = str(real_view.documents[str(real_view.spans["span_id"].iloc[0])]["doc_id"].iloc[0])
    doc_filter = (("text_input", "tf-doc", doc_id),)

    def runs_page():
        data.settings_table(home)
        data.trend(home, "sample", "ndcg@10")

    def compare_page():
        data.compare_runs(home, older, newest)

    def query_page():
        data.per_query(home, newest, ["query_id", "ndcg@10"])
        data.query_texts(data.load_run(home, newest).dataset.path)
        data.side_by_side(home, older, newest, query_id)
        data.query_across_runs(home, query_id, ("ndcg@10", "recall@100"))

    def traces_page():
        data.list_traces(home, replace(data.SEARCHES, limit=200))
        data.count_traces(home)
        view = data.waterfall(home, first)
        if view is not None:
            data.span_documents(home, view, str(view.spans["span_id"].iloc[0]))

    def traces_filtered():
        flt = replace(data.SEARCHES, mode="graph", band="low", no_confident=True, query_text="ferry")
        data.list_traces(home, flt)
        data.count_traces(home, flt)

    def traces_by_document():
        data.list_traces(home, replace(data.SEARCHES, doc_id=doc_id))
        data.count_traces(home, replace(data.SEARCHES, doc_id=doc_id))

    def calibration_page():
        data.calibration(home, newest)

    def latency_page():
        data.stage_percentiles(data.stage_latency(home, newest))
        data.load_run(home, newest)
        data.latency_by_run(home)

    def served(seconds: float | None) -> Callable[[], object]:
        return lambda: data.traffic(home, data.since_for(seconds))

    def with_runs(fn: Callable[[], object]) -> Callable[[], object]:
        return lambda: (data.list_runs(home), fn())

    pages = {
        "Runs": ("views/runs.py", with_runs(runs_page), {}, ()),
        "Compare": ("views/compare.py", with_runs(compare_page), {"base": older, "cand": newest}, ()),
        "Query": ("views/query.py", with_runs(query_page), {"query": query_id, "run": newest, "base": older}, ()),
        "Traces": ("views/traces.py", with_runs(traces_page), {"trace": first}, ()),
        "Traces (4 filters)": ("views/traces.py", with_runs(traces_filtered), {}, FOUR_FILTERS),
        "Traces (document id)": ("views/traces.py", with_runs(traces_by_document), {}, doc_filter),
        "Calibration": ("views/calibration.py", with_runs(calibration_page), {"run": newest}, ()),
        "Latency": ("views/latency.py", with_runs(latency_page), {"run": newest}, ()),
    }
    if hasattr(data, "traffic"):  # the served-traffic view (issue 27)
        pages |= {"Latency (served, 1 h)": ("views/latency.py", with_runs(served(3600)), {}, SERVED),
                  "Latency (served, 24 h)": ("views/latency.py", with_runs(served(86_400)), {}, SERVED_DAY),
                  "Latency (served, all)": ("views/latency.py", with_runs(served(None)), {}, SERVED_ALL)}
    return pages



def median_ms(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def apptest_ms(script: str, params: dict[str, str], widgets: tuple, repeats: int) -> tuple[float, float]:
    """Cold (caches cleared) and warm AppTest runs of one page, median ms."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=120).run()
    cold, warm = [], []
    for _ in range(repeats):
        st.cache_data.clear()
        at.query_params.clear()
        at.query_params.update(params)
        at.switch_page(script)
        if widgets:  # set through the widgets, as a user would
            at.run()
            for i, (kind, key, value) in enumerate(widgets):
                getattr(at, kind)(key=key).set_value(value)
                if i < len(widgets) - 1 and kind == "segmented_control":  # the widgets after it appear on a rerun
                    at.run()
            st.cache_data.clear()
        t = time.perf_counter()
        at.run()
        cold.append((time.perf_counter() - t) * 1000)
        if at.exception:
            raise RuntimeError(at.exception[0].message)
        t = time.perf_counter()
        at.run()
        warm.append((time.perf_counter() - t) * 1000)
    return statistics.median(cold), statistics.median(warm)


NAV = ("Runs", "Compare", "Query", "Traces", "Calibration", "Latency")


def _serve(home: Path):
    import socket
    import subprocess
    import urllib.request

    from searchtrace.dashboard.cli import streamlit_command

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(streamlit_command(home, "127.0.0.1", port), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=os.environ | {"SEARCHTRACE_HOME": str(home)})
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read()
            return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("streamlit did not start")


def browser_ms(home: Path, repeats: int) -> dict[str, list[float]]:
    """Headless Chromium against a fresh ``streamlit run`` per round, until the page's script
    finished and its tables are in the DOM.

    Per round: a full load of the Runs page (cold server), then each other page by its
    sidebar link (its data not yet cached), then every page by its link again (cached).
    Returns ``{"load Runs" | "nav cold <page>" | "nav warm <page>": [ms per round]}``.
    """
    sys.path.insert(0, str(REPO / "tests" / "dashboard"))
    from headless_chromium import Chromium
    from test_dashboard_browser import READY

    out: dict[str, list[float]] = {}

    def timed(label: str, act: Callable[[], object], wait: str) -> None:
        t = time.perf_counter()
        act()
        browser.wait_for(wait)
        out.setdefault(label, []).append((time.perf_counter() - t) * 1000)

    with Chromium(timeout_s=60) as browser:
        for _ in range(repeats):
            proc, url = _serve(home)
            try:
                browser.open("about:blank")
                timed("load Runs (fresh server)", functools.partial(browser.open, url), READY)
                for phase in ("cold", "warm"):
                    for name in (NAV[1:] if phase == "cold" else NAV):
                        click = ("Array.from(document.querySelectorAll('[data-testid=stSidebarNav] a'))"
                                 f".find(a => a.innerText.trim() === '{name}').click()")
                        timed(f"nav {phase} {name}", functools.partial(browser.evaluate, click),
                              f"document.querySelector('h1')?.innerText.trim() === '{name}' && {READY}")
            finally:
                proc.terminate()
                proc.wait(10)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", help="the home to build or reuse (default: a temporary folder)")
    ap.add_argument("--traces", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--browser", action="store_true", help="also time page loads in headless Chromium")
    ap.add_argument("--live", action="store_true", help="label the synthetic searches live traffic (see above)")
    args = ap.parse_args()
    from streamlit.logger import set_log_level

    set_log_level("error")  # AppTest outside a server logs each cache clear

    home = Path(args.dir or tempfile.mkdtemp(prefix="bench-dashboard-")).resolve()
    build_home(home, args.runs, args.traces, args.live)
    os.environ["SEARCHTRACE_HOME"] = str(home)
    pages = page_loads(home)
    for fn in (p[1] for p in pages.values()):
        fn()  # imports and the OS page cache, once
    print(f"\nper page, median of {args.repeats} (ms): data (uncached) | AppTest cold cache | AppTest warm cache")
    for name, (script, load, params, widgets) in pages.items():
        data_ms = median_ms(load, args.repeats)
        cold, warm = apptest_ms(script, params, widgets, args.repeats)
        print(f"  {name:<24} {data_ms:8.1f} | {cold:8.1f} | {warm:8.1f}")
    if args.browser:
        print(f"\nheadless Chromium until the tables are rendered, {args.repeats} fresh servers (ms): median | max")
        for label, times in browser_ms(home, args.repeats).items():
            print(f"  {label:<30} {statistics.median(times):8.1f} | {max(times):8.1f}")
    print(f"(home left in {home})")


if __name__ == "__main__":
    main()
