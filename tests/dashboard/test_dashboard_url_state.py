"""Each page's choices live in its URL (AppTest): a URL's parameters set the widgets, a widget changed writes
its parameter, a reload (a fresh session on the URL) reopens the same view, the sidebar's bare link reopens the
view shown last, and a value the page cannot show gets a one-line notice, never a traceback."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
TRACES, CALIBRATION, LATENCY = "views/traces.py", "views/calibration.py", "views/latency.py"
JUDGE, IMPLICIT = "views/judge.py", "views/implicit.py"


def fresh(home: Path, script: str, params: dict[str, str | list[str]], monkeypatch):
    """A new session (a reload, or a link pasted) opening ``script`` on ``params``."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("SEARCHTRACE_HOME", str(home))
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    return visit(at, script, params)


def visit(at, script: str, params: dict[str, str | list[str]]):
    """The same session following a link to ``script`` with ``params`` (or the sidebar's, without)."""
    at.query_params.clear()
    at.query_params.update(params)
    return at.switch_page(script).run()


def ok(at) -> None:
    assert not at.exception, [e.message for e in at.exception]


def url(at) -> dict[str, str | list[str]]:
    """The URL's parameters, a repeated one as a list."""
    return {k: (v if not isinstance(v, list) or len(v) != 1 else v[0]) for k, v in at.query_params.items()}


def notices(at) -> list[str]:
    return [i.value.replace("\\", "") for i in at.info if "is not a choice here" in i.value]


# --- Traces --------------------------------------------------------------------------------------------------

TRACE_FILTERS = {"kind": "all", "mode": "graph", "band": "high", "confident": "no", "degraded": "any stage",
                 "source": "eval", "status": "no errors", "latency": "2.5", "text": "ship", "doc": "bio-x",
                 "rows": "60", "attr": "searchtrace.mode", "value": "gra", "preset": "eval runs",
                 "time": "last 30 days", "order": "slowest first", "service": "rag-app"}
TRACE_WIDGETS = {"preset": ("selectbox", "tf-preset", "eval runs"), "time": ("selectbox", "tf-time", "last 30 days"),
                 "order": ("selectbox", "tf-order", "slowest first"),
                 "service": ("text_input", "tf-service", "rag-app"),
                 "kind": ("selectbox", "tf-kind", "all"), "mode": ("selectbox", "tf-mode", "graph"),
                 "band": ("selectbox", "tf-band", "high"), "confident": ("selectbox", "tf-noconf", "no"),
                 "degraded": ("selectbox", "tf-degraded", "any stage"),
                 "source": ("selectbox", "tf-source", "eval"), "status": ("selectbox", "tf-status", "no errors"),
                 "latency": ("number_input", "tf-lat", 2.5), "text": ("text_input", "tf-text", "ship"),
                 "doc": ("text_input", "tf-doc", "bio-x"), "rows": ("number_input", "tf-limit", 60),
                 "attr": ("text_input", "tf-attr-key", "searchtrace.mode"),
                 "value": ("text_input", "tf-attr-value", "gra")}


def widget(at, kind: str, key: str):
    return getattr(at, kind)(key=key)


def test_a_traces_link_sets_every_filter_and_a_reload_keeps_them(dashboard_home, run_ids, monkeypatch):
    params = TRACE_FILTERS | {"run": run_ids["fast"]}
    at = fresh(dashboard_home, TRACES, params, monkeypatch)
    ok(at)
    for name, (kind, key, value) in TRACE_WIDGETS.items():
        assert widget(at, kind, key).value == value, name
    assert at.selectbox(key="tf-run").value == run_ids["fast"]
    assert url(at) == params  # nothing dropped, nothing added
    assert not notices(at)


@pytest.mark.parametrize("name", sorted(TRACE_WIDGETS))
def test_a_traces_filter_changed_writes_the_url(dashboard_home, monkeypatch, name):
    kind, key, value = TRACE_WIDGETS[name]
    at = fresh(dashboard_home, TRACES, {}, monkeypatch)
    assert name not in at.query_params  # a default is left out
    if kind == "text_input":
        widget(at, kind, key).input(value).run()
    else:
        widget(at, kind, key).set_value(value).run()
    ok(at)
    assert url(at)[name] == TRACE_FILTERS[name]
    reloaded = fresh(dashboard_home, TRACES, url(at), monkeypatch)
    assert widget(reloaded, kind, key).value == value
    if kind == "text_input":  # back to the default: the parameter goes, and the view is not the one remembered
        widget(at, kind, key).input("").run()
    else:
        widget(at, kind, key).set_value(widget(fresh(dashboard_home, TRACES, {}, monkeypatch), kind, key).value).run()
    ok(at)
    assert name not in at.query_params


def test_the_traces_run_filter_is_in_the_url(dashboard_home, run_ids, monkeypatch):
    at = fresh(dashboard_home, TRACES, {}, monkeypatch)
    at.selectbox(key="tf-run").set_value(run_ids["top20"]).run()
    ok(at)
    assert url(at)["run"] == run_ids["top20"]
    assert set(at.dataframe[0].value["run_id"]) == {run_ids["top20"]}


@pytest.mark.parametrize("name, bad", [("kind", "parties"), ("mode", "<b>x</b>"), ("band", "ultra"),
                                       ("confident", "maybe"), ("degraded", "all"), ("source", "carrier pigeon"),
                                       ("status", "fine"), ("latency", "fast"), ("latency", "-3"),
                                       ("rows", "1000000"), ("rows", "ten"), ("run", "../../etc"),
                                       ("preset", "everything"), ("time", "last year"), ("order", "random")])
def test_a_bad_traces_filter_in_the_url_is_a_notice(dashboard_home, monkeypatch, name, bad):
    at = fresh(dashboard_home, TRACES, {name: bad}, monkeypatch)
    ok(at)
    [said] = notices(at)
    assert bad in said and "\n" not in said
    assert name not in at.query_params and len(at.dataframe[0].value) > 0  # the default shown


def test_the_traces_sidebar_link_reopens_the_filters_shown_last(dashboard_home, monkeypatch):
    at = fresh(dashboard_home, TRACES, {"mode": "fast", "rows": "20"}, monkeypatch)
    visit(at, CALIBRATION, {})
    at = visit(at, TRACES, {})  # the sidebar's link: no parameters
    ok(at)
    assert url(at) == {"mode": "fast", "rows": "20"} and at.selectbox(key="tf-mode").value == "fast"
    assert len(at.dataframe[0].value) == 20


def test_filters_that_list_nothing_are_reopened_too(dashboard_home, monkeypatch):
    at = fresh(dashboard_home, TRACES, {"doc": "no-such-document"}, monkeypatch)
    assert [i.value for i in at.info] == ["No trace to show."]
    visit(at, CALIBRATION, {})
    at = visit(at, TRACES, {})
    assert url(at) == {"doc": "no-such-document"}


def test_filters_all_back_to_their_defaults_are_followed_not_restored(dashboard_home, monkeypatch):
    at = fresh(dashboard_home, TRACES, {"mode": "fast"}, monkeypatch)
    at.selectbox(key="tf-mode").set_value("any").run()
    ok(at)
    assert url(at) == {} and at.selectbox(key="tf-mode").value == "any"


# --- Calibration ---------------------------------------------------------------------------------------------


def test_calibration_run_in_the_url(dashboard_home, run_ids, monkeypatch):
    at = fresh(dashboard_home, CALIBRATION, {"run": run_ids["fast"]}, monkeypatch)
    ok(at)
    assert at.selectbox(key="calibration-run").value == run_ids["fast"]
    at.selectbox(key="calibration-run").set_value(run_ids["top20"]).run()
    ok(at)
    assert url(at) == {"run": run_ids["top20"]}
    visit(at, LATENCY, {})
    at = visit(at, CALIBRATION, {})
    assert at.selectbox(key="calibration-run").value == run_ids["top20"]
    assert any("shown last in this session" in c.value for c in at.caption)


def test_calibration_bad_run_is_a_notice(dashboard_home, run_ids, monkeypatch):
    at = fresh(dashboard_home, CALIBRATION, {"run": "no-such-run"}, monkeypatch)
    ok(at)
    [said] = notices(at)
    assert "no-such-run" in said
    assert at.selectbox(key="calibration-run").value == run_ids["nodense"] and url(at) == {"run": run_ids["nodense"]}


# --- Latency -------------------------------------------------------------------------------------------------


def test_latency_eval_view_in_the_url(dashboard_home, run_ids, monkeypatch):
    params = {"run": run_ids["fast"], "stages": ["dense", "keyword"], "pct": "p99"}
    at = fresh(dashboard_home, LATENCY, params, monkeypatch)
    ok(at)
    assert at.segmented_control(key="latency-view").value == "eval runs"
    assert at.selectbox(key="latency-run").value == run_ids["fast"]
    assert at.multiselect(key="latency-stages").value == ["dense", "keyword"]
    assert at.selectbox(key="latency-pct").value == "p99"
    at.selectbox(key="latency-pct").set_value("p50").run()
    at.multiselect(key="latency-stages").set_value(["graph"]).run()
    at.selectbox(key="latency-run").set_value(run_ids["base"]).run()
    ok(at)
    assert url(at) == {"run": run_ids["base"], "stages": "graph", "pct": "p50"}
    again = fresh(dashboard_home, LATENCY, url(at), monkeypatch)
    assert again.multiselect(key="latency-stages").value == ["graph"] and again.selectbox(key="latency-pct").value == "p50"


def test_latency_served_view_and_window_in_the_url(mixed_home, monkeypatch):
    params = {"view": "served traffic", "window": "last 24 h", "source": "http"}
    at = fresh(mixed_home, LATENCY, params, monkeypatch)
    ok(at)
    assert at.segmented_control(key="latency-view").value == "served traffic"
    assert at.selectbox(key="latency-window").value == "last 24 h"
    assert at.selectbox(key="latency-traffic-source").value == "http"
    assert url(at) == params
    at.selectbox(key="latency-window").set_value("dates").run()
    ok(at)
    assert at.date_input(key="latency-dates")
    at.date_input(key="latency-dates").set_value((date(2026, 1, 2), date(2026, 1, 5))).run()
    ok(at)
    assert url(at) == params | {"window": "dates", "dates": "2026-01-02..2026-01-05"}
    again = fresh(mixed_home, LATENCY, url(at), monkeypatch)
    assert again.date_input(key="latency-dates").value == (date(2026, 1, 2), date(2026, 1, 5))
    assert any("2026-01-02 to 2026-01-05" in i.value for i in again.info)  # no traffic then, and it says when
    at.segmented_control(key="latency-view").set_value("eval runs").run()
    ok(at)
    assert "view" not in at.query_params and not {"window", "dates", "source"} & set(at.query_params)


@pytest.mark.parametrize("params", [{"view": "sideways"}, {"view": "served traffic", "window": "forever"},
                                    {"view": "served traffic", "window": "dates", "dates": "2026-13-01..x"},
                                    {"view": "served traffic", "window": "dates", "dates": "2026-02-05..2026-02-01"},
                                    {"view": "served traffic", "source": "smoke signal"},
                                    {"stages": ["dense", "teleport"]}, {"pct": "p42"}])
def test_latency_bad_values_are_notices(mixed_home, monkeypatch, params):
    at = fresh(mixed_home, LATENCY, params, monkeypatch)
    ok(at)
    assert len(notices(at)) == 1, [i.value for i in at.info]


# --- Judge and Implicit --------------------------------------------------------------------------------------


@pytest.fixture
def judged(tmp_path) -> tuple[Path, Path]:
    import shutil

    from test_dashboard_judge import POOL, SAMPLE, write_pool

    from searchtrace.evals import JudgingSession

    dataset = tmp_path / "mine"
    shutil.copytree(SAMPLE, dataset)
    write_pool(dataset)
    session = JudgingSession.open(dataset)
    query, doc = POOL[0]
    session.record(query, doc, 2, "ana")
    session.record(query, doc, 0, "bo")
    (tmp_path / "home").mkdir()
    return tmp_path / "home", dataset


def test_judge_dataset_and_view_in_the_url(judged, monkeypatch):
    home, dataset = judged
    at = fresh(home, JUDGE, {"dataset": str(dataset), "view": "Disagreements"}, monkeypatch)
    at.text_input(key="judge-name-input").input("cy").run()
    at.button(key="judge-name-start").click().run()
    ok(at)
    assert at.text_input(key="judge-dataset-path").value == str(dataset)
    assert at.segmented_control(key="judge-view").value == "Disagreements"
    assert len(at.dataframe) == 1  # the disagreement
    at.segmented_control(key="judge-view").set_value("Pairs").run()
    ok(at)
    assert url(at) == {"dataset": str(dataset), "judge": "cy"}  # the judge too: a reload keeps them
    at.segmented_control(key="judge-view").set_value("Disagreements").run()
    assert url(at) == {"dataset": str(dataset), "view": "Disagreements", "judge": "cy"}
    at = visit(at, JUDGE, {})  # the sidebar's link
    assert at.text_input(key="judge-dataset-path").value == str(dataset)
    assert at.segmented_control(key="judge-view").value == "Disagreements"


def test_judge_typed_dataset_writes_the_url(judged, monkeypatch):
    home, dataset = judged
    at = fresh(home, JUDGE, {}, monkeypatch)
    at.text_input(key="judge-dataset-path").input(str(dataset)).run()
    ok(at)
    assert url(at) == {"dataset": str(dataset)}
    visit(at, IMPLICIT, {"dataset": str(home)})  # not a dataset: that page stops, this one keeps its own
    at = visit(at, JUDGE, {})  # the sidebar's link, before any name was given
    assert url(at) == {"dataset": str(dataset)}


def test_judge_bad_values_are_one_line(judged, tmp_path, monkeypatch):
    home, dataset = judged
    at = fresh(home, JUDGE, {"dataset": str(dataset), "view": "everything"}, monkeypatch)
    at.text_input(key="judge-name-input").input("cy").run()
    at.button(key="judge-name-start").click().run()
    ok(at)
    assert len(notices(at)) == 1 and "view" not in at.query_params
    at = fresh(home, JUDGE, {"dataset": str(tmp_path / "nowhere")}, monkeypatch)
    ok(at)
    assert [e.value.replace("\\", "") for e in at.error] == [f"no dataset folder {tmp_path / 'nowhere'}"]


def test_implicit_dataset_and_threshold_in_the_url(served, monkeypatch):
    home, dataset = served
    at = fresh(home, IMPLICIT, {"dataset": str(dataset), "min": "5"}, monkeypatch)
    ok(at)
    assert at.number_input(key="implicit-min").value == 5
    assert at.text_input(key="implicit-dataset-path").value == str(dataset)
    at.number_input(key="implicit-min").set_value(20).run()
    ok(at)
    assert url(at) == {"dataset": str(dataset), "min": "20"}
    assert at.dataframe[0].value.empty  # 10 impressions a pair at most: none reaches 20
    at = fresh(home, IMPLICIT, {"dataset": str(dataset), "min": "zero"}, monkeypatch)
    ok(at)
    assert len(notices(at)) == 1 and at.number_input(key="implicit-min").value == 1


# --- Compare, Query and Runs: the choices beside the picks ---------------------------------------------------

COMPARE, QUERY, RUNS = "views/compare.py", "views/query.py", "views/runs.py"


def test_compare_metric_outcome_and_runs_in_the_url(dashboard_home, run_ids, monkeypatch):
    pair = {"base": run_ids["base"], "cand": run_ids["fast"]}
    params = pair | {"metric": "recall@100", "show": "improved", "runs": [run_ids["top20"], run_ids["fast"]]}
    at = fresh(dashboard_home, COMPARE, params, monkeypatch)
    ok(at)
    assert at.selectbox(key="compare-metric").value == "recall@100"
    assert at.segmented_control(key="compare-view").value == "improved"
    assert at.multiselect(key="compare-several").value == [run_ids["top20"], run_ids["fast"]]
    at.selectbox(key="compare-metric").set_value("ndcg@10").run()
    at.segmented_control(key="compare-view").set_value("all changed").run()
    at.multiselect(key="compare-several").set_value([run_ids["nodense"]]).run()
    ok(at)
    assert url(at) == pair | {"show": "all changed", "runs": run_ids["nodense"]}
    visit(at, RUNS, {})
    at = visit(at, COMPARE, {})  # the sidebar's link
    assert url(at) == pair | {"show": "all changed", "runs": run_ids["nodense"]}
    bad = fresh(dashboard_home, COMPARE, pair | {"metric": "ndcg@9000"}, monkeypatch)
    ok(bad)
    assert len(notices(bad)) == 1 and bad.selectbox(key="compare-metric").value == "ndcg@10"


def test_query_gold_runs_in_the_url(dashboard_home, run_ids, monkeypatch):
    params = {"run": run_ids["fast"], "base": run_ids["base"], "query": "test-001", "gold": [run_ids["top20"]]}
    at = fresh(dashboard_home, QUERY, params, monkeypatch)
    ok(at)
    assert at.multiselect(key="query-gold-runs").value == [run_ids["top20"]]
    at.multiselect(key="query-gold-runs").set_value([run_ids["nodense"], run_ids["base"]]).run()
    ok(at)
    assert url(at)["gold"] == [run_ids["nodense"], run_ids["base"]]


def test_runs_trend_in_the_url(dashboard_home, monkeypatch):
    at = fresh(dashboard_home, RUNS, {"metric": "recall@100"}, monkeypatch)
    ok(at)
    assert at.selectbox(key="trend-metric").value == "recall@100"
    at.selectbox(key="trend-metric").set_value("ndcg@10").run()
    ok(at)
    assert "metric" not in at.query_params
    at.selectbox(key="trend-metric").set_value("mrr@10").run()
    assert url(at) == {"metric": "mrr@10"}
    bad = fresh(dashboard_home, RUNS, {"trend": "no-such-dataset"}, monkeypatch)
    ok(bad)
    assert len(notices(bad)) == 1
