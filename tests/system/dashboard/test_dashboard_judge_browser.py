"""The Judge page in a real headless Chromium: a judge names themself, grades pairs with mouse clicks and
with the grade's key, types a note (its digits grade nothing), and every judgment lands in ``judgments.jsonl``;
the grade buttons are drawn under the passage in distinct colours, an undo says what it took back, and a
reload keeps the judge.

Driven over the DevTools protocol, as the dashboard's other browser tests are
(``headless_chromium.py``). Planted probe strings in the query and the document
render as text. Needs Debian's ``chromium`` (``.ci/install-browser.sh``).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from searchtrace.evals import JudgingSession

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("chromium") is None,
                       reason="no chromium on PATH: run .ci/install-browser.sh (Debian chromium, chromium-driver)"),
]

IDLE = "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
POOL = [("test-001", "bio-orsolya-venn"), ("test-001", "gld-lampwrights-guild"), ("test-001", "bio-meribel-osk"),
        ("test-002", "shp-herons-wake")]


@pytest.fixture(scope="module")
def judged_dataset(tmp_path_factory) -> Path:
    """A copy of the sample with a pool of four pairs; the first document's text carries the injection probe."""
    from test_dashboard_injection import PROBE
    from test_dashboard_judge import SAMPLE, write_pool

    root = tmp_path_factory.mktemp("judge-browser") / "mine"
    shutil.copytree(SAMPLE, root)
    rows = [json.loads(line) for line in (root / "corpus.jsonl").read_text().splitlines() if line.strip()]
    for row in rows:
        if row["_id"] == POOL[0][1]:
            row["text"] += " " + PROBE
    (root / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    write_pool(root, POOL)
    return root


@pytest.fixture(scope="module")
def server(judged_dataset):
    from streamlit_server import serve

    home = judged_dataset.parent / "home"
    home.mkdir()
    with serve(home) as url:
        yield url


def stored(dataset: Path) -> list:
    return list(JudgingSession.open(dataset).store.read())


def wait_stored(dataset: Path, count: int, timeout_s: float = 30.0) -> list:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        judgments = stored(dataset)
        if len(judgments) >= count:
            return judgments
        time.sleep(0.1)
    raise TimeoutError(f"{count} judgments not stored: {stored(dataset)}")


def settle(browser, text: str) -> str:
    browser.wait_for(f"{IDLE} && document.body.innerText.includes({json.dumps(text)})")
    time.sleep(0.5)
    browser.wait_for(IDLE)
    return browser.evaluate("document.body.innerText")


def type_into(browser, selector: str, text: str) -> None:
    browser.click(selector)
    browser.call("Input.insertText", text=text)
    key(browser, "Enter", "Enter", 13)


def key(browser, name: str, code: str, virtual: int, text: str | None = None) -> None:
    """One key pressed and released, as a keyboard's."""
    extra = {"text": text} if text else {}
    browser.call("Input.dispatchKeyEvent", type="keyDown", key=name, code=code, windowsVirtualKeyCode=virtual, **extra)
    browser.call("Input.dispatchKeyEvent", type="keyUp", key=name, code=code, windowsVirtualKeyCode=virtual)


def test_a_judge_grades_pairs_by_click_and_key_and_the_store_has_them(server, browser, judged_dataset):
    from test_dashboard_injection import OUTSIDE, inert

    browser.open(f"{server}/judge?dataset={quote(str(judged_dataset))}")
    settle(browser, "Start judging")
    type_into(browser, ".st-key-judge-name-input input", "ana")
    browser.click(".st-key-judge-name-start button")
    text = settle(browser, "This query: 0 of 3 pairs done")
    assert "judging as ana" in text and "Orsolya Venn" in text
    inert(json.loads(browser.evaluate(OUTSIDE)), "judge page")  # the probe in the document is text
    assert "[Click to re-login](https://evil.example/login)" in text.replace("\u2060", "")
    # the grade buttons under the passage, each its own colour as drawn
    bottom, tops = browser.evaluate("""(() => {  // one moment, so both boxes are in one scroll position
        const box = s => document.querySelector(s).getBoundingClientRect();
        return [box('.st-key-judge-document').bottom,
                [0, 1, 2].map(g => box(`.st-key-judge-grade-${g} button`).top)]; })()""")
    assert all(top >= bottom for top in tops), (bottom, tops)
    colours = [browser.evaluate(f"getComputedStyle(document.querySelector('.st-key-judge-grade-{g} button'))"
                                ".backgroundColor") for g in range(3)]
    assert len(set(colours)) == 3, colours

    browser.click(".st-key-judge-grade-2 button")  # a mouse click
    assert [(j.pair, j.grade, j.judge) for j in wait_stored(judged_dataset, 1)] == [(POOL[0], 2, "ana")]
    settle(browser, "This query: 1 of 3 pairs done")

    type_into(browser, ".st-key-judge-note input", "mentions 1 guild")  # a digit typed in the note grades nothing
    time.sleep(1.0)
    assert len(stored(judged_dataset)) == 1
    browser.click(".st-key-judge-grade-0 button")
    second = wait_stored(judged_dataset, 2)[1]
    assert (second.pair, second.grade, second.note) == (POOL[1], 0, "mentions 1 guild")
    settle(browser, "This query: 2 of 3 pairs done")

    browser.click("h1")  # focus off the inputs: the grade's key is its shortcut
    key(browser, "1", "Digit1", 49, "1")
    third = wait_stored(judged_dataset, 3)[2]
    assert (third.pair, third.grade, third.note) == (POOL[2], 1, None)
    settle(browser, "Every pair of query test-001 is done.")

    browser.click(".st-key-judge-undo button")
    text = settle(browser, "This query: 2 of 3 pairs done")
    assert f"Undone: your grade 1 of document {POOL[2][1]} for query {POOL[2][0]}" in text
    assert stored(judged_dataset)[-1].pair == POOL[2] and stored(judged_dataset)[-1].retracts
    browser.click(".st-key-judge-grade-2 button")
    wait_stored(judged_dataset, 5)
    settle(browser, "Every pair of query test-001 is done.")
    browser.click(".st-key-judge-next-query button")
    text = settle(browser, "This query: 0 of 1 pairs done")
    assert "Heron" in text
    browser.open(browser.evaluate("window.location.href"))  # a reload: a new session, the judge kept by the URL
    text = settle(browser, "This query: 0 of 1 pairs done")
    assert "judging as ana" in text and "Start judging" not in text
    assert [(j.pair, j.grade) for j in stored(judged_dataset)] == [
        (POOL[0], 2), (POOL[1], 0), (POOL[2], 1), (POOL[2], None), (POOL[2], 2)]
