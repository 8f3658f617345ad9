"""Randomized sequences of picks, filters, Back and reloads on the Runs and Traces pages (AppTest): whatever the
page shows as the picked run or trace is the one the user picked last, while the filters show it; otherwise
nothing is picked (a pick a filter hid is cleared with a notice).

A pick is what a click on a row leaves in the URL (AppTest cannot click a table row; the browser tests do),
a filter is a widget the user changes, Back reopens the previous URL in the same session, and a reload opens
the current URL in a new session.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
TAGS = ("all", "ablation", "rrf")


def _fresh(home: Path, params: dict[str, str], monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("SEARCHTRACE_HOME", str(home))
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params.update(params)
    return at.run()


def _open(at, params: dict[str, str]):
    at.query_params.clear()
    at.query_params.update(params)
    return at.switch_page("views/runs.py").run()


def _shown_pick(at, names: dict[str, str]) -> str | None:
    """The run the page presents as picked: its bold name over the buttons (None without buttons)."""
    if not [b for b in at.button if b.key == "runs-open-compare"]:
        return None
    bold = [m.value for m in at.markdown if m.value.startswith("**")]
    from searchtrace.dashboard.ui.text import md

    matches = [r for r, n in names.items() if bold and bold[0].startswith(f"**{md(n)}**")]
    assert len(matches) == 1, (bold, names)
    return matches[0]


@pytest.mark.parametrize("seed", range(6))
def test_the_shown_pick_is_the_last_run_picked_while_the_filters_show_it(dashboard_home, run_ids, monkeypatch, seed):
    from searchtrace.dashboard.data import list_runs
    from searchtrace.dashboard.ui.picks import table_key

    runs = list_runs(dashboard_home)
    names = dict(zip(runs["run_id"], runs["name"]))
    tags = {r: {t.strip() for t in str(v).split(",") if t.strip()} for r, v in zip(runs["run_id"], runs["tags"])}

    def visible(tag: str) -> list[str]:
        return [r for r in runs["run_id"] if tag == "all" or tag in tags[r]]

    rng = random.Random(seed)
    url: dict[str, str] = {}
    history: list[dict[str, str]] = []
    at = _fresh(dashboard_home, url, monkeypatch)
    for step in range(8):
        action = rng.choice(("pick", "pick", "filter", "back", "reload"))
        tag = url.get("tag", "all")
        if action == "pick":
            history.append(dict(url))
            url["pick"] = rng.choice(visible(tag))
            at = _open(at, url)
        elif action == "filter":
            history.append(dict(url))
            tag = rng.choice(TAGS)
            at.selectbox(key="runs-tag").set_value(tag).run()
            url = {k: v for k, v in url.items() if k != "tag"} | ({"tag": tag} if tag != "all" else {})
            if url.get("pick") not in visible(tag):
                url.pop("pick", None)
        elif action == "back" and history:
            url = history.pop()
            at = _open(at, url)
        else:
            at = _fresh(dashboard_home, url, monkeypatch)
        assert not at.exception, [e.message for e in at.exception]
        expected = url.get("pick") if url.get("pick") in visible(url.get("tag", "all")) else None
        assert _shown_pick(at, names) == expected, (seed, step, action, url)
        assert at.query_params.get("pick") == expected, (seed, step, action, url)
        shown = visible(url.get("tag", "all"))  # the table's selected row is the pick's, wherever it stands
        selection = at.session_state[table_key("runs-table", shown)]["selection"]["rows"]
        assert selection == ([shown.index(expected)] if expected else []), (seed, step, action, url)


# --- the Traces page -----------------------------------------------------------------------------------------

MODES = ("any", "fast", "graph")


def _open_traces(at, params: dict[str, str]):
    at.query_params.clear()
    at.query_params.update(params)
    return at.switch_page("views/traces.py").run()


def _shown_trace(at) -> str | None:
    """The trace the page shows: the id in the caption under its heading (None when it shows none)."""
    ids = [c.value.split(" ")[1] for c in at.caption if c.value.startswith("trace ")]
    assert len(ids) <= 1, ids
    return ids[0] if ids else None


@pytest.mark.parametrize("seed", range(6))
def test_the_shown_trace_is_the_last_trace_picked_while_the_filters_show_it(dashboard_home, run_ids, monkeypatch,
                                                                            seed):
    from searchtrace.dashboard.data import SEARCHES, list_traces
    from searchtrace.dashboard.ui.picks import table_key

    runs = ("any", *run_ids.values())

    def visible(url: dict[str, str]) -> list[str]:
        run, mode = url.get("run"), url.get("mode")
        return list_traces(dashboard_home, replace(SEARCHES, run_id=run, mode=mode, limit=200))["trace_id"].tolist()

    rng = random.Random(seed)
    url: dict[str, str] = {}
    history: list[dict[str, str]] = []
    last: dict[str, str] = {}
    at = _fresh(dashboard_home, url, monkeypatch)
    at = _open_traces(at, url)
    for step in range(10):
        action = rng.choice(("pick", "pick", "filter", "filter", "back", "reload"))
        cleared = False
        if action == "pick" and visible(url):
            history.append(dict(url))
            url["trace"] = rng.choice(visible(url))
            at = _open_traces(at, url)
        elif action in ("pick", "filter"):
            history.append(dict(url))
            name, options, key = rng.choice((("run", runs, "tf-run"), ("mode", MODES, "tf-mode")))
            value = rng.choice(options)
            at.selectbox(key=key).set_value(value).run()
            url = {k: v for k, v in url.items() if k != name} | ({name: value} if value != "any" else {})
            if url.get("trace") and url["trace"] not in visible(url):
                del url["trace"]
                cleared = True
        elif action == "back" and history:
            url = history.pop()
            at = _open_traces(at, url)
            if not url:  # a URL naming nothing (the sidebar's link too) reopens the view shown last
                url = dict(last)
        else:
            at = _fresh(dashboard_home, url, monkeypatch)
            at = _open_traces(at, url)
        last = dict(url)
        where = (seed, step, action, url)
        assert not at.exception, [e.message for e in at.exception]
        shown = visible(url)
        expected = url.get("trace")
        assert expected is None or expected in shown, where  # a pick is made among the rows a filter shows
        assert at.query_params.get("trace") == expected, where
        assert _shown_trace(at) == (expected or (shown[0] if shown else None)), where
        if expected is None and shown:
            assert any("No trace picked" in c.value for c in at.caption), where
        assert cleared == any("is not among the rows shown" in i.value for i in at.info), where
        selection = at.session_state[table_key("traces-table", shown)]["selection"]["rows"]
        assert selection == ([shown.index(expected)] if expected else []), where
