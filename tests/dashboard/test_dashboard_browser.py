"""The dashboard served by ``streamlit run`` and loaded in a real headless Chromium.

Each page must render its heading and its tables with no Streamlit exception
element. Screenshots go to ``$SEARCHTRACE_SCREENSHOTS`` when set (else a
temporary folder). Needs Debian's ``chromium`` (``.ci/install-browser.sh``).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.request
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(dashboard_home):
    """``searchtrace dashboard``'s streamlit command on a free loopback port; yields the base URL."""
    from searchtrace.dashboard.cli import streamlit_command

    port = free_port()
    env = os.environ | {"SEARCHTRACE_HOME": str(dashboard_home)}
    proc = subprocess.Popen(streamlit_command(dashboard_home, "127.0.0.1", port), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read() == b"ok":
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"streamlit did not start: {proc.stdout.read().decode(errors='replace')[-2000:]}")
        time.sleep(0.3)
    yield url
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="module")
def browser():
    from headless_chromium import Chromium

    with Chromium(timeout_s=60) as chromium:
        yield chromium


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("SEARCHTRACE_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def pages(run_ids: dict[str, str]) -> list[tuple[str, str, str, str]]:
    """(name, path and query, heading, a text the page must show) of every page."""
    base, fast = run_ids["base"], run_ids["fast"]
    return [("runs", "", "Runs", "Trend"),  # the default page lives at the root
            ("compare", f"compare?base={base}&cand={fast}", "Compare", "Most regressed queries"),
            ("query", f"query?query=test-001&run={base}", "Query", "Orsolya Venn"),
            ("traces", "traces", "Traces", "400 matching traces"),
            ("calibration", f"calibration?run={base}", "Calibration", "Reliability diagram"),
            ("latency", f"latency?run={fast}", "Latency", "Across runs")]


def test_every_page_renders_in_chromium(server, browser, shots, run_ids):
    import json

    for name, path, heading, text in pages(run_ids):
        browser.open(f"{server}/{path}")
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


def test_server_listens_on_loopback_only(server):
    table = Path("/proc/net/tcp")
    if not table.exists():
        pytest.skip("needs Linux /proc/net/tcp")
    port = int(server.rsplit(":", 1)[1])
    listening = [line.split()[1] for line in table.read_text().splitlines()[1:]
                 if line.split()[3] == "0A" and int(line.split()[1].split(":")[1], 16) == port]
    assert listening == [f"0100007F:{port:04X}"]
