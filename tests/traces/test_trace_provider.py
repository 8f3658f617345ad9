"""TraceSettings resolution and the provider make_tracer_provider builds."""

from __future__ import annotations

import pytest
from trace_fixtures import FakeSearch, emulate_search

from searchtrace.home import Home
from searchtrace.traces import vocabulary as v
from searchtrace.traces.export.exporter import SafeExporter, StoreSpanExporter
from searchtrace.traces.export.provider import OtlpProtocol, TraceSettings, attribute_limit, make_tracer_provider
from searchtrace.traces.spans.attributes import CaptureConfig
from searchtrace.traces.store.sqlite import TraceStore


def test_defaults():
    s = TraceSettings.resolve(environ={})
    assert s == TraceSettings(store=True, otlp=False, protocol=OtlpProtocol.HTTP_PROTOBUF, capture=CaptureConfig(),
                              service_name="searchtrace", max_span_attributes=2 * 2 * 100 + 64)


def test_environment_overrides_defaults():
    s = TraceSettings.resolve(environ={
        "SEARCHTRACE_TRACE_STORE": "0", "SEARCHTRACE_CAPTURE_QUERY": "false", "SEARCHTRACE_CAPTURE_CONTENT": "1",
        "SEARCHTRACE_MAX_CANDIDATES": "20", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_SERVICE_NAME": "api", "OTEL_BSP_MAX_QUEUE_SIZE": "4096"})
    assert (s.store, s.otlp, s.protocol, s.service_name) == (False, True, OtlpProtocol.GRPC, "api")
    assert s.max_queue_size == 4096 and TraceSettings.resolve(environ={}).max_queue_size == 16_384
    assert s.capture == CaptureConfig(capture_query=False, capture_content=True, max_candidates=20)
    assert s.max_span_attributes == 2 * 3 * 20 + 64


def test_explicit_arguments_override_the_environment():
    env = {"SEARCHTRACE_TRACE_STORE": "0", "SEARCHTRACE_CAPTURE_QUERY": "0", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c",
           "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "SEARCHTRACE_MAX_CANDIDATES": "20"}
    s = TraceSettings.resolve(store=True, otlp=False, protocol="http/protobuf", capture_query=True, max_candidates=7,
                              environ=env)
    assert (s.store, s.otlp, s.protocol, s.capture.capture_query, s.capture.max_candidates) == (
        True, False, OtlpProtocol.HTTP_PROTOBUF, True, 7)


@pytest.mark.parametrize("env, otlp", [
    ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c/v1/traces"}, True),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_TRACES_EXPORTER": "none"}, False),
    ({"OTEL_TRACES_EXPORTER": "console, otlp"}, True),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "SEARCHTRACE_OTLP": "off"}, False),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_SDK_DISABLED": "true"}, False),
])
def test_when_otlp_is_on(env, otlp):
    assert TraceSettings.resolve(environ=env).otlp is otlp


def test_traces_protocol_beats_the_general_one():
    env = {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}
    assert TraceSettings.resolve(environ=env).protocol is OtlpProtocol.HTTP_PROTOBUF


def test_sdk_disabled_turns_the_store_off_too():
    assert TraceSettings.resolve(environ={"OTEL_SDK_DISABLED": "true"}).store is False


def test_attribute_limit_variable_wins():
    assert TraceSettings.resolve(environ={"OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT": "50"}).max_span_attributes is None


@pytest.mark.parametrize("env, message", [
    ({"SEARCHTRACE_TRACE_STORE": "maybe"}, "SEARCHTRACE_TRACE_STORE must be one of 1, true, yes, on, 0, false"),
    ({"SEARCHTRACE_MAX_CANDIDATES": "-3"}, "SEARCHTRACE_MAX_CANDIDATES must be a whole number >= 0, got '-3'"),
    ({"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
     "OTEL_EXPORTER_OTLP_PROTOCOL must be one of http/protobuf, grpc, got 'http/json'"),
    ({"OTEL_BSP_MAX_QUEUE_SIZE": "0"}, "OTEL_BSP_MAX_QUEUE_SIZE must be a whole number >= 1, got '0'"),
    ({"SEARCHTRACE_OTLP_EXIT_TIMEOUT": "inf"}, "SEARCHTRACE_OTLP_EXIT_TIMEOUT must be a number >= 0, got 'inf'"),
])
def test_bad_variables_are_reported(env, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        TraceSettings.resolve(environ=env)


def test_a_bad_protocol_argument_is_reported_and_wins_over_a_bad_variable():
    with pytest.raises(ValueError, match="OTLP protocol must be one of http/protobuf, grpc, got 'http/json'"):
        TraceSettings.resolve(protocol="http/json", environ={})
    assert TraceSettings.resolve(protocol="grpc", environ={"OTEL_EXPORTER_OTLP_PROTOCOL": "x"}).protocol is (
        OtlpProtocol.GRPC)


def test_store_only_provider_writes_home_traces_sqlite(tmp_path):
    home = tmp_path / "home"
    provider, handles = make_tracer_provider(Home(home), TraceSettings.resolve(environ={}))
    assert not home.exists()  # nothing opened until the first export
    assert [type(e) for e in handles.exporters] == [StoreSpanExporter]
    trace_id = emulate_search(provider.get_tracer("searchtrace"), FakeSearch(candidates=100))
    assert handles.force_flush()
    detail = handles.store.load_trace(trace_id)
    assert detail.resource["service.name"] == "searchtrace"
    dense = next(s for s in detail.spans if s.name == "dense").attributes
    # 100 candidates, stored compactly (OpenInference document keys are added for OTLP only)
    assert dense[v.OPENINFERENCE_SPAN_KIND] == "RETRIEVER" and len(dense[v.CANDIDATE_IDS]) == 100
    assert dense[v.CANDIDATE_IDS][99] == "dense-96"
    handles.shutdown()
    assert TraceStore(home / "traces.sqlite").count() == 1
    assert handles.stats() == {f"store {home / 'traces.sqlite'}": handles.exporters[0].stats()}
    assert handles.exporters[0].exported_spans == 11


def test_otlp_only_provider(tmp_path, monkeypatch):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    _, handles = make_tracer_provider(Home(tmp_path), TraceSettings.resolve(store=False, otlp=True))
    assert handles.store is None and [type(e) for e in handles.exporters] == [SafeExporter]
    assert handles.exporters[0].name == "otlp http/protobuf http://127.0.0.1:9"
    handles.shutdown()


def test_attribute_limit_covers_the_reranker():
    assert attribute_limit(CaptureConfig(max_candidates=100)) == 464
    assert attribute_limit(CaptureConfig(max_candidates=10, capture_content=True)) == 124


def test_endpoint_credentials_stay_out_of_warnings(tmp_path, monkeypatch):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "https://user:secret@collector.example:4318")
    _, handles = make_tracer_provider(Home(tmp_path), TraceSettings.resolve(store=False, otlp=True, protocol="http/protobuf"))
    assert handles.exporters[0].name == "otlp http/protobuf https://collector.example:4318"
    handles.shutdown()


def test_close_flushes_the_store_and_gives_a_silent_collector_a_bounded_wait(tmp_path, monkeypatch, caplog):
    """A collector that accepts connections and never answers: close() returns after its timeout, the
    store holds every span, and one line says how many spans the collector did not get."""
    import socket
    import threading

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{silent.getsockname()[1]}")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "30")
        provider, handles = make_tracer_provider(Home(tmp_path), TraceSettings.resolve(otlp=True,
                                                                                        protocol="http/protobuf"))
        trace_id = emulate_search(provider.get_tracer("t"), FakeSearch())
        reports = []
        closing = threading.Thread(target=lambda: reports.append(handles.close(remote_timeout_s=0.3)), daemon=True)
        closing.start()
        closing.join(10)  # the collector's own timeout is 30 s: close() must not wait for it
        assert not closing.is_alive()
    [report] = reports
    assert list(report.unsent.values()) == [11]
    assert TraceStore(tmp_path / "traces.sqlite").stored([trace_id]) == {trace_id: 11}
    unsent = [r.getMessage() for r in caplog.records if "were not sent" in r.getMessage()]
    assert unsent == [f"11 spans were not sent to {handles.exporters[1].name} (gave up after 0.3 s at exit)"]
