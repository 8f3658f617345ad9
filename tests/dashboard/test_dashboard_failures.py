"""Failures first and live traffic (issue 27): what failed, model loads apart, cold searches, served traces
with titles and triples, and the Latency page's served-traffic view. Data tests and AppTest; the browser
checks are in ``test_dashboard_failures_browser.py``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from searchtrace.dashboard.data import SEARCHES, count_traces, list_traces, span_documents, traffic, waterfall
from searchtrace.home import Home
from searchtrace.traces import TraceKind, TraceStore
from searchtrace.traces import vocabulary as v

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
MS = 1_000_000
S = 1000 * MS
T0 = 1_700_000_000_000_000_000


# --- on the live home (the real retriever, the real server) ------------------------------------------

slow = pytest.mark.slow


@slow
def test_model_loads_are_their_own_kind_never_a_search(live_home):
    home = live_home["home"]
    searches = {"cold", "failed", "served", "refused"}
    listed = list_traces(home)
    assert set(listed["trace_id"]) == {live_home[k] for k in searches} and count_traces(home) == 4
    assert live_home["load"] not in set(list_traces(home, replace(SEARCHES, min_latency_ms=0.0))["trace_id"])  # nor a slow search
    loads = list_traces(home, replace(SEARCHES, kind=TraceKind.MODEL_LOAD))
    assert loads["trace_id"].tolist() == [live_home["load"]] and loads["root"].tolist() == [v.EMBEDDER_LOAD_SPAN]
    assert loads["cold"].tolist() == [""]  # a load is not a "slow search", likely cold or not
    assert list_traces(home, replace(SEARCHES, kind=TraceKind.OTHER))["trace_id"].tolist() == [live_home["docs"]]
    assert count_traces(home, replace(SEARCHES, kind=None)) == 6


@slow
def test_the_first_search_after_the_load_is_marked_cold(live_home):
    home = live_home["home"]
    cold = list_traces(home).set_index("trace_id")["cold"]
    assert cold[live_home["cold"]] == "yes" and (cold.drop(live_home["cold"]) == "").all()
    assert waterfall(home, live_home["cold"]).cold and not waterfall(home, live_home["served"]).cold


@slow
def test_the_list_says_status_source_root_and_duration(live_home):
    listed = list_traces(live_home["home"]).set_index("trace_id")
    row = listed.loc[live_home["refused"]]
    assert (row["status"], row["source"], row["root"], row["error_code"]) == (
        "error", "http", "POST /v1/search", "VALIDATION_ERROR")
    row = listed.loc[live_home["cold"]]
    assert (row["status"], row["source"], row["root"]) == ("ok", "cli", "search") and row["duration_ms"] > 0
    errors = list_traces(live_home["home"], replace(SEARCHES, errors=True))
    assert set(errors["trace_id"]) == {live_home["failed"], live_home["refused"]}


@slow
def test_an_error_shows_its_span_message_and_exception(live_home):
    view = waterfall(live_home["home"], live_home["refused"])
    error = view.error
    assert (error.name, error.failed, error.spans_in_error) == ("validate", True, 3)  # server, search, validate
    assert error.message == "top_k: must be between 1 and 500, got 0"
    spans = view.spans.set_index("name")
    assert spans.loc["validate", "message"] == error.message and spans.loc["POST /v1/search", "status"] == "ERROR"
    [raised] = view.exceptions.itertuples(index=False)
    assert (raised.name, raised.type, raised.message) == ("validate", "searchtrace.errors.ValidationError",
                                                          error.message)
    assert raised.stacktrace.startswith("Traceback (most recent call last)")
    assert waterfall(live_home["home"], live_home["served"]).error is None


@slow
def test_a_served_trace_reads_like_an_eval_trace(live_home, sample_dataset):
    home = live_home["home"]
    view = waterfall(home, live_home["served"])
    titles = {d.id: d.title for d in sample_dataset.docs}
    spans = view.spans.set_index("name")["span_id"]
    results = span_documents(home, view, spans["search"])
    facts = results[results["doc_id"].str.startswith("rel:")]
    assert len(facts) > 0 and facts["title"].str.count(" → ").eq(2).all()  # the triple, not an opaque id
    for doc_id, title in zip(facts["doc_id"], facts["title"]):
        assert title == " → ".join(view.triples[doc_id])
    chunks = results[~results["doc_id"].str.startswith("rel:")]
    assert chunks["title"].tolist() == [titles[d] for d in chunks["doc_id"]]
    dense = span_documents(home, view, spans["dense"])  # candidates: titles read from the index's dataset
    assert len(dense) > 10 and dense["title"].tolist() == [titles[d] for d in dense["doc_id"]]


@slow
def test_served_traffic_per_source_and_stage(live_home):
    seen = traffic(live_home["home"])
    assert set(seen.requests["trace_id"]) == {live_home[k] for k in ("cold", "failed", "served", "refused", "docs")}
    sources = seen.by_source.set_index("source")
    assert sources.loc["all", "requests"] == 5 and sources.loc["http", "requests"] == 3
    assert (sources.loc["cli", "errors"], sources.loc["http", "errors"]) == (1, 1)
    assert sources.loc["all", ["429", "504"]].tolist() == [0, 0]
    stages = seen.stages[seen.stages["source"] == "all"].set_index("stage")
    assert stages.loc["request", "n"] == 5 and stages.loc["dense", "n"] == 2 and stages.loc["validate", "n"] == 4
    assert list(stages.index[:2]) == ["validate", "rewrite"] and stages.index[-1] == "request"
    assert seen.per_minute["per_minute"].sum() * seen.bucket_min == 5 and not seen.truncated


# --- synthetic server spans: 429s, 504s and MCP ------------------------------------------------------


def _write_served(home: Path, requests: list[tuple[str, str, int | None, str | None, int]]) -> None:
    """Server spans (source, name, HTTP status, error code, start second), each over a search span unless
    refused (429), written to the home's store."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import SpanKind, Status, StatusCode, set_span_in_context

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    for source, name, status, code, at in requests:
        start = T0 + at * S
        attributes: dict[str, str | int] = {v.SOURCE: source}
        if status:
            attributes[v.HTTP_RESPONSE_STATUS_CODE] = status
        server = tracer.start_span(name, kind=SpanKind.SERVER, start_time=start, attributes=attributes)
        if status != 429:
            search = tracer.start_span(v.SEARCH_SPAN, context=set_span_in_context(server), start_time=start + MS,
                                       attributes={v.SOURCE: source, v.MODE: "fast"})
            search.end(end_time=start + 9 * MS)
        if code:
            server.set_attribute(v.ERROR_CODE, code)
            server.set_status(Status(StatusCode.ERROR, code))
        server.end(end_time=start + 10 * MS)
    store = TraceStore(Home(home).traces)
    store.write(exporter.get_finished_spans())
    store.close()


def test_traffic_counts_429s_504s_and_errors_per_source(tmp_path):
    _write_served(tmp_path, [("http", "POST /v1/search", 200, None, 0), ("http", "POST /v1/search", 429, "OVERLOADED", 1),
                             ("http", "POST /v1/search", 504, "TIMEOUT", 2), ("mcp", "tools/call search", None, "TIMEOUT", 3),
                             ("mcp", "tools/call search", None, "OVERLOADED", 64), ("mcp", "tools/call search", None, None, 65)])
    seen = traffic(tmp_path)
    sources = seen.by_source.set_index("source")
    assert sources[["requests", "errors", "429", "504"]].to_dict("index") == {
        "all": {"requests": 6, "errors": 4, "429": 2, "504": 2},
        "http": {"requests": 3, "errors": 2, "429": 1, "504": 1},
        "mcp": {"requests": 3, "errors": 2, "429": 1, "504": 1}}
    assert sources.loc["all", "p50"] == pytest.approx(10.0)
    per_minute = seen.per_minute.groupby("source")["per_minute"].sum()
    assert seen.bucket_min == 1 and per_minute.to_dict() == {"http": 3.0, "mcp": 3.0}
    assert traffic(tmp_path, since_ns=T0 + 3 * S).by_source.set_index("source").loc["all", "requests"] == 3
    assert traffic(tmp_path, until_ns=T0 + 3 * S, limit=2).truncated  # three in the window, two read


def test_traffic_of_a_home_without_a_store_is_empty(tmp_path):
    seen = traffic(tmp_path)
    assert seen.requests.empty and seen.by_source.empty and seen.stages.empty and seen.per_minute.empty


# --- the pages, through AppTest ---------------------------------------------------------------------


@pytest.fixture
def live_app(live_home, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("SEARCHTRACE_HOME", str(live_home["home"]))
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    at.query_params.clear()
    return at


def _texts(at) -> str:
    return " ".join(e.value for kind in ("markdown", "caption", "error", "info", "warning")
                    for e in getattr(at, kind))


@slow
def test_traces_page_lists_searches_and_shows_what_failed(live_app, live_home):
    at = live_app.switch_page("views/traces.py").run()
    assert not at.exception
    listed = at.dataframe[0].value
    assert live_home["load"] not in set(listed["trace_id"]) and {"status", "source", "root"} <= set(listed.columns)
    at.selectbox(key="tf-kind").set_value("model loads").run()
    assert at.dataframe[0].value["trace_id"].tolist() == [live_home["load"]]
    at.selectbox(key="tf-kind").set_value("searches").run()
    at.selectbox(key="tf-status").set_value("errors only").run()
    assert set(at.dataframe[0].value["trace_id"]) == {live_home["failed"], live_home["refused"]}
    at.query_params["trace"] = live_home["refused"]
    at = at.run()
    errors = " ".join(e.value for e in at.error).replace("\\", "")  # Markdown escapes
    assert "Failed in **validate**: top_k: must be between 1 and 500, got 0 (3 spans in error)" in errors
    assert "POST /v1/search" in _texts(at).replace("\\", "") and "HTTP 400" in _texts(at)


@slow
def test_traces_page_marks_the_cold_search(live_app, live_home):
    live_app.query_params["trace"] = live_home["cold"]
    at = live_app.switch_page("views/traces.py").run()
    assert not at.exception and any("Cold search" in i.value for i in at.info)
    assert at.dataframe[0].value.set_index("trace_id").loc[live_home["cold"], "cold"] == "❄"


@slow
def test_latency_page_served_traffic_view(live_app):
    at = live_app.switch_page("views/latency.py").run()
    assert not at.exception
    assert at.segmented_control(key="latency-view").value == "served traffic"  # the home has no eval run
    at.selectbox(key="latency-window").set_value("all").run()
    sources, stages = (d.value for d in at.dataframe)
    assert sources.set_index("source").loc["all", "requests"] == 5 and "request" in set(stages["stage"])
    at.selectbox(key="latency-traffic-source").set_value("http").run()
    assert at.dataframe[1].value["n"].max() == 3


@slow
def test_latency_page_of_eval_runs_keeps_its_view(dashboard_home, run_ids, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("SEARCHTRACE_HOME", str(dashboard_home))
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    at.query_params.update({"run": run_ids["base"]})
    at = at.switch_page("views/latency.py").run()
    assert not at.exception and at.segmented_control(key="latency-view").value == "eval runs"
    at.segmented_control(key="latency-view").set_value("served traffic").run()
    assert not at.exception and any("No live traffic" in i.value for i in at.info)  # eval searches are not traffic
