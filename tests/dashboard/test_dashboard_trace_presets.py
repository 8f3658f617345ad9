"""The Traces page's presets, time range, order and error columns, and the Latency page's latency over time per
source and per service (issue 40): data tests, then AppTest. The Chromium walk is
``tests/system/dashboard/test_dashboard_live_traffic_browser.py``."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from trace_fixtures import FakeSearch, record

from searchtrace.dashboard.data import PRESETS, SEARCHES, count_traces, list_traces, range_start, traffic
from searchtrace.home import Home
from searchtrace.traces import TraceOrder, TraceStore
from searchtrace.traces import vocabulary as v

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
MS = 1_000_000
S = 1000 * MS
T0 = 1_700_000_000_000_000_000


def _served(home: Path, requests: list[tuple[str, str, str, int, str | None, int, int]]) -> list[str]:
    """Server spans (service, source, name, HTTP status, error code, start second, ms) over a search span,
    each service's from its own resource, written to the home's store; their trace ids."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import SpanKind, Status, StatusCode, set_span_in_context

    exporter = InMemorySpanExporter()
    tracers = {}
    ids = []
    for service, source, name, status, code, at, ms in requests:
        if service not in tracers:
            provider = TracerProvider(resource=Resource({"service.name": service}))
            provider.add_span_processor(SimpleSpanProcessor(exporter))
            tracers[service] = provider.get_tracer("test")
        tracer, start = tracers[service], T0 + at * S
        server = tracer.start_span(name, kind=SpanKind.SERVER, start_time=start,
                                   attributes={v.SOURCE: source, v.HTTP_RESPONSE_STATUS_CODE: status})
        search = tracer.start_span(v.SEARCH_SPAN, context=set_span_in_context(server), start_time=start + MS,
                                   attributes={v.SOURCE: source, v.MODE: "fast", v.INPUT_VALUE: f"q{at}"})
        search.end(end_time=start + (ms - 1) * MS)
        if code:
            server.set_attribute(v.ERROR_CODE, code)
            server.set_status(Status(StatusCode.ERROR, f"{code.lower()} at {at}"))
        server.end(end_time=start + ms * MS)
        ids.append(format(server.get_span_context().trace_id, "032x"))
    store = TraceStore(Home(home).traces)
    store.write(exporter.get_finished_spans())
    store.close()
    return ids


def _evals(home: Path, n: int, after: int) -> list[str]:
    spans, ids = record(*(FakeSearch(start_ns=T0 + (after + i) * S, run_id="run-1", query_id=f"q{i}", source="eval",
                                     dataset="sample") for i in range(n)))
    store = TraceStore(Home(home).traces)
    store.write(spans)
    store.close()
    return ids


@pytest.fixture
def mixed(tmp_path):
    """Served requests (one refused, one not found) of two services, then 300 eval searches after them."""
    served = _served(tmp_path, [("searchtrace", "http", "POST /v1/search", 200, None, 0, 10),
                                ("searchtrace", "mcp", "tools/call search", 200, None, 30, 40),
                                ("searchtrace", "http", "POST /v1/search", 400, "VALIDATION_ERROR", 70, 5),
                                ("rag-app", "otlp", "retrieve", 200, None, 75, 100),
                                ("rag-app", "otlp", "retrieve", 404, None, 130, 20)])
    return tmp_path, served, _evals(tmp_path, 300, 200)


def test_live_traffic_finds_the_served_requests_under_newer_eval_traces(mixed):
    home, served, evals = mixed
    live = PRESETS["live traffic"].apply(SEARCHES)
    assert list_traces(home, live)["trace_id"].tolist() == served[::-1]
    assert count_traces(home, live) == 5
    assert list_traces(home, replace(SEARCHES, limit=None))["trace_id"].tolist()[:3] == evals[:-4:-1]
    ran = PRESETS["eval runs"].apply(SEARCHES)
    assert count_traces(home, ran) == 300 and list_traces(home, replace(ran, limit=1))["trace_id"].tolist() == [
        evals[-1]]


def test_errors_of_any_kind_show_their_code_message_and_status(mixed):
    home, served, _ = mixed
    errors = list_traces(home, PRESETS["errors of any kind"].apply(SEARCHES)).set_index("trace_id")
    assert errors.index.tolist() == [served[4], served[2]]  # the 404 ended without an error status
    assert errors.loc[served[2], ["error_code", "message", "status_code"]].tolist() == [
        "VALIDATION_ERROR", "validation_error at 70", 400]
    assert errors.loc[served[4], ["error_code", "message", "status_code"]].tolist() == ["", "", 404]
    assert errors.loc[served[2], "query"] == "q70"  # a refused request whose query was recorded keeps it


def test_the_order_and_the_service_are_the_stores(mixed):
    home, served, _ = mixed
    live = PRESETS["live traffic"].apply(SEARCHES)
    slowest = list_traces(home, replace(live, order=TraceOrder.SLOWEST, limit=2))
    assert slowest["trace_id"].tolist() == [served[3], served[1]]
    assert slowest["duration_ms"].tolist() == [100.0, 40.0]
    assert list_traces(home, replace(live, service="rag-app"))["trace_id"].tolist() == [served[4], served[3]]


def test_a_time_range_starts_on_the_minute():
    now = datetime(2026, 12, 6, 14, 37, 21, 500, tzinfo=UTC)
    assert range_start("last hour", now) == datetime(2026, 12, 6, 13, 37, tzinfo=UTC)
    assert range_start("any time", now) is None
    with pytest.raises(KeyError, match="time range must be one of any time, last 15 minutes"):
        range_start("last year", now)


def test_latency_over_time_per_source_and_per_service(mixed):
    home, _, _ = mixed
    seen = traffic(home)
    assert seen.bucket_min == 1
    over = seen.over_time
    services = over[(over["by"] == "service") & (over["percentile"] == "p50")]
    rag = services[services["name"] == "rag-app"].sort_values("minute")
    assert rag["ms"].tolist() == [100.0, 20.0] and rag["n"].tolist() == [1, 1]  # minute 1, then minute 2
    first = services[(services["name"] == "searchtrace")].sort_values("minute")
    assert first["ms"].tolist() == [pytest.approx((10 + 40) / 2), 5.0]  # seconds 0 and 30, then 70
    sources = over[(over["by"] == "source") & (over["percentile"] == "p99") & (over["name"] == "otlp")]
    assert sources["ms"].tolist() == [100.0, 20.0]
    assert set(over["percentile"]) == {"p50", "p95", "p99"}


# --- AppTest --------------------------------------------------------------------------------------


@pytest.fixture
def app(mixed, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from searchtrace.dashboard.ui import cached

    home, served, evals = mixed
    monkeypatch.setenv("SEARCHTRACE_HOME", str(home))
    monkeypatch.delenv("SEARCHTRACE_STORE", raising=False)
    cached.st.cache_data.clear()
    return AppTest.from_file(str(APP), default_timeout=120), served, evals


def test_the_traces_page_preset_lists_live_traffic_with_its_errors(app):
    at, served, evals = app
    at = at.switch_page("views/traces.py").run()
    assert not at.exception, [e.message for e in at.exception]
    assert set(at.dataframe[0].value["trace_id"]) <= set(evals)  # the default: searches, newest first
    at.selectbox(key="tf-preset").set_value("live traffic").run()
    listed = at.dataframe[0].value
    assert listed["trace_id"].tolist() == served[::-1]
    assert {"error_code", "message", "status_code", "service"} <= set(listed.columns)
    assert at.selectbox(key="tf-kind").disabled and at.query_params["preset"] == "live traffic"
    assert any(c.value.startswith("5 matching traces in the whole store") for c in at.caption)
    at.selectbox(key="tf-order").set_value("slowest first").run()
    assert at.dataframe[0].value["trace_id"].tolist()[:2] == [served[3], served[1]]
    at.selectbox(key="tf-preset").set_value("errors of any kind").run()
    assert at.dataframe[0].value["trace_id"].tolist() == [served[4], served[2]]  # still slowest first
    assert not at.exception


def test_the_latency_page_plots_latency_over_time_per_service(app):
    at, _, _ = app
    at.query_params.update({"view": "served traffic", "window": "all"})
    at = at.switch_page("views/latency.py").run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.segmented_control(key="latency-traffic-by").value == "source"
    at.segmented_control(key="latency-traffic-by").set_value("service").run()
    assert not at.exception and at.query_params["by"] == "service"
    sources = at.dataframe[0].value.set_index("source")
    assert sources.loc["all", "requests"] == 5
