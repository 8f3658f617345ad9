"""Spans reach a real OTLP receiver on 127.0.0.1, over HTTP/protobuf and over gRPC.

The receivers are in-process: an ``http.server`` decoding ``ExportTraceServiceRequest``
and a minimal gRPC ``TraceService``. The exporters are configured only through the
standard ``OTEL_EXPORTER_OTLP_*`` variables, as a user would.
"""

from __future__ import annotations

import gzip
import threading
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from trace_fixtures import STAGES, FakeSearch, emulate_search

from searchtrace.home import Home
from searchtrace.traces import vocabulary as v
from searchtrace.traces.export.provider import TraceSettings, make_tracer_provider


def _value(any_value: AnyValue):
    kind = any_value.WhichOneof("value")
    assert kind is not None
    if kind == "array_value":
        return tuple(_value(x) for x in any_value.array_value.values)
    return getattr(any_value, kind)


def _spans(requests: list[trace_service_pb2.ExportTraceServiceRequest]) -> dict[str, dict]:
    out = {}
    for request in requests:
        for rs in request.resource_spans:
            resource = {kv.key: _value(kv.value) for kv in rs.resource.attributes}
            for ss in rs.scope_spans:
                for span in ss.spans:
                    out[span.name] = {"resource": resource, "trace_id": span.trace_id.hex(),
                                      "parent": span.parent_span_id.hex(),
                                      "attributes": {kv.key: _value(kv.value) for kv in span.attributes}}
    return out


@pytest.fixture
def otlp_env(monkeypatch):
    for name in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_TRACES_EXPORTER",
                 "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_SDK_DISABLED"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
def http_receiver():
    received: list[tuple[str, trace_service_pb2.ExportTraceServiceRequest]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            received.append((self.path, trace_service_pb2.ExportTraceServiceRequest.FromString(body)))
            reply = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], received
    server.shutdown()
    server.server_close()


@pytest.fixture
def grpc_receiver():
    grpc = pytest.importorskip("grpc")
    received: list[trace_service_pb2.ExportTraceServiceRequest] = []

    class Service(trace_service_pb2_grpc.TraceServiceServicer):
        def Export(self, request, context):  # noqa: N802
            received.append(request)
            return trace_service_pb2.ExportTraceServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Service(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield port, received
    server.stop(grace=None)


def _check(spans: dict[str, dict], trace_id: str) -> None:
    assert sorted(spans) == sorted(["search", *(s.value for s in STAGES)])
    assert {s["trace_id"] for s in spans.values()} == {trace_id}
    root = spans["search"]
    assert root["resource"]["service.name"] == "searchtrace" and root["parent"] == ""
    assert root["attributes"][v.RESULT_IDS] == ("d1", "d2", "d3")
    assert root["attributes"][v.TOP_K] == 3 and root["attributes"][v.BEST_SCORE] == 0.81
    dense = spans["dense"]["attributes"]
    assert dense[v.OPENINFERENCE_SPAN_KIND] == "RETRIEVER"
    assert [dense[f"{v.RETRIEVAL_DOCUMENTS}.{i}.{v.DOCUMENT_ID}"] for i in range(4)] == ["d1", "d2", "d3", "dense-0"]
    assert dense[f"{v.RETRIEVAL_DOCUMENTS}.99.{v.DOCUMENT_ID}"] == "dense-96"
    assert dense[v.CANDIDATE_SCORES][:2] == (1.0, 0.9) and len(dense[v.CANDIDATE_IDS]) == 100


def test_otlp_http_protobuf(tmp_path, otlp_env, http_receiver):
    port, received = http_receiver
    otlp_env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
    otlp_env.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    settings = TraceSettings.resolve()
    assert settings.otlp  # on because the endpoint variable is set
    provider, handles = make_tracer_provider(Home(tmp_path), settings)
    trace_id = emulate_search(provider.get_tracer("searchtrace"), FakeSearch(candidates=100))
    handles.shutdown()
    assert {path for path, _ in received} == {"/v1/traces"}
    _check(_spans([r for _, r in received]), trace_id)
    otlp, store = handles.exporters[1], handles.exporters[0]
    assert (otlp.exported_spans, otlp.failures) == (11, 0)
    assert store.exported_spans == 11  # the local store alongside


def test_otlp_grpc(tmp_path, otlp_env, grpc_receiver):
    port, received = grpc_receiver
    otlp_env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
    otlp_env.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    provider, handles = make_tracer_provider(Home(tmp_path), TraceSettings.resolve(store=False))
    trace_id = emulate_search(provider.get_tracer("searchtrace"), FakeSearch(candidates=100))
    handles.shutdown()
    _check(_spans(received), trace_id)
    assert (handles.exporters[0].exported_spans, handles.exporters[0].failures) == (11, 0)
