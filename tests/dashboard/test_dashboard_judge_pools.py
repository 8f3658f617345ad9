"""The Judge page's datasets, judge and undo through Streamlit's AppTest: every folder with a pool is listed (a
query set made from traffic that no run of the home scored included), the judge's name survives a reload, an
undo says what it took back, and the grade buttons sit under the passage, each in its own colour."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from test_dashboard_judge import APP, JUDGE_PAGE, POOL, SAMPLE, ok, open_judge, shown_pair, stored, write_pool

from searchtrace.dashboard.ui.judge_parts import BEST_HUE, WORST_HUE, grade_colours


@pytest.fixture
def home(tmp_path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def dataset(home) -> Path:
    root = home.parent / "mine"
    shutil.copytree(SAMPLE, root)
    write_pool(root)
    return root


@pytest.fixture
def traffic_home(home) -> tuple[Path, Path, Path]:
    """A home holding searches of three of the sample's queries, a query set made from them by ``queries
    from-traces`` and pooled, a copy of the sample with a pool, and a copy without one; no run scored any.
    Returns the home, the query set and the pooled copy."""
    from trace_fixtures import MS, T0, FakeSearch, record

    from searchtrace.cli import main
    from searchtrace.home import Home
    from searchtrace.traces import TraceStore

    texts = [json.loads(line)["text"] for line in (SAMPLE / "queries.jsonl").read_text().splitlines()[:3]]
    spans, _ = record(*(FakeSearch(query=t, source="http", dataset="sample", start_ns=T0 + i * 1000 * MS)
                        for i, t in enumerate(texts)))
    store = TraceStore(Home(home).traces)
    store.write(spans)
    store.close()
    queries = home / "traffic-q"
    assert main(["queries", "from-traces", str(queries), "--dataset", str(SAMPLE), "--home", str(home),
                 "--no-progress"]) == 0
    ids = [json.loads(line)["_id"] for line in (queries / "queries.jsonl").read_text().splitlines()]
    write_pool(queries, [(q, d) for q in ids for d in ("bio-orsolya-venn", "shp-herons-wake")])
    pooled, bare = home / "pooled", home / "bare"
    for folder in (pooled, bare):
        shutil.copytree(SAMPLE, folder)
    write_pool(pooled)
    return home, queries, pooled


def test_every_folder_with_a_pool_is_listed_a_query_set_from_traffic_included(traffic_home, monkeypatch):
    from streamlit.testing.v1 import AppTest

    home, queries, pooled = traffic_home
    monkeypatch.setenv("SEARCHTRACE_HOME", str(home))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    at.switch_page(JUDGE_PAGE).run()
    ok(at)
    box = at.selectbox(key="judge-dataset")
    assert box.options == sorted([f"{pooled.resolve()}", f"{queries.resolve()}  (queries from traffic)"])
    box.set_value(str(queries.resolve())).run()
    at.text_input(key="judge-name-input").input("ana").run()
    at.button(key="judge-name-start").click().run()
    ok(at)
    query, doc = shown_pair(at)
    at.button(key="judge-grade-1").click().run()
    [judgment] = stored(queries)  # judged into the query set's own folder
    assert (judgment.pair, judgment.grade, judgment.judge) == ((query, doc), 1, "ana")


def test_the_judge_is_remembered_across_a_reload_until_they_say_not_you(home, dataset, monkeypatch):
    from streamlit.testing.v1 import AppTest

    at = open_judge(home, dataset, monkeypatch)
    assert at.query_params["judge"] in ("ana", ["ana"])
    link = {k: at.query_params[k] for k in at.query_params}
    again = AppTest.from_file(str(APP), default_timeout=60).run()  # a new browser session: a reload
    again.query_params.update(link)
    again.switch_page(JUDGE_PAGE).run()
    ok(again)
    assert not [t for t in again.text_input if t.key == "judge-name-input"]
    assert any("judging as **ana**" in c.value for c in again.caption) and shown_pair(again) == POOL[0]
    again.button(key="judge-forget-name").click().run()
    assert [t.key for t in again.text_input if t.key == "judge-name-input"] and "judge" not in again.query_params
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    at.query_params.update({**link, "judge": " \t "})  # no name: asked again
    at.switch_page(JUDGE_PAGE).run()
    assert [t.key for t in at.text_input if t.key == "judge-name-input"]


def test_an_undo_says_which_judgment_it_took_back(home, dataset, monkeypatch):
    at = open_judge(home, dataset, monkeypatch)
    at.button(key="judge-grade-2").click().run()
    at.button(key="judge-grade-0").click().run()
    assert not at.success
    at.button(key="judge-undo").click().run()
    ok(at)
    said = [s.value.replace("\\", "") for s in at.success]
    assert said == [f"Undone: your grade 0 of document {POOL[1][1]} for query {POOL[1][0]}; the pair is shown again."]
    assert stored(dataset)[-1].pair == POOL[1] and stored(dataset)[-1].retracts
    at.button(key="judge-grade-1").click().run()
    assert not at.success  # said once, after the undo only


def _order(node, out: list[str]) -> list[str]:
    """The keys of the page's elements and blocks in the order they are drawn (depth first)."""
    key = getattr(node, "key", None) or getattr(getattr(node, "proto", None), "id", None)
    if key:
        out.append(str(key))
    for child in getattr(node, "children", {}).values():
        _order(child, out)
    return out


def test_the_grade_buttons_sit_under_the_passage_each_in_its_own_colour(home, dataset, monkeypatch):
    at = open_judge(home, dataset, monkeypatch)
    drawn = _order(at._tree, [])
    document = next(i for i, k in enumerate(drawn) if "judge-document" in k)
    grades = [i for i, k in enumerate(drawn) if re.fullmatch(r"judge-grade-\d", k)]
    assert len(grades) == 3 and min(grades) > document
    assert all(at.button(key=f"judge-grade-{g}").proto.type != "primary" for g in range(3))
    style = "".join(h.proto.body for h in at.get("html"))
    hues = {g: int(re.search(rf"\.st-key-judge-grade-{g} button {{background-color: hsl\((\d+),", style)[1])
            for g in range(3)}
    assert hues == {0: WORST_HUE, 1: (WORST_HUE + BEST_HUE) // 2, 2: BEST_HUE}  # worst red, best green


def test_any_scale_gets_a_distinct_colour_per_grade():
    for n in (1, 2, 5, 11):
        colours = grade_colours(list(range(n)))
        assert len(set(colours.values())) == n
