"""``searchtrace serve`` mounts the receiver of ``searchtrace collect``: ``POST /v1/traces`` behind the same
guards, with the receiver's own body bound in place of the 64 KiB a search request may carry."""

from __future__ import annotations

from pathlib import Path

from opentelemetry.trace import NoOpTracer
from receive_fixtures import PROTOBUF, assert_stored_as_sent, protobuf_body, sdk_spans
from starlette.testclient import TestClient

from searchtrace.retriever.serve.config import MAX_BODY_BYTES, ServeConfig
from searchtrace.retriever.serve.http import create_app
from searchtrace.retriever.serve.service import Service
from searchtrace.traces.store.opening import open_trace_store

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"


def test_serve_stores_received_spans_in_its_store(sample_config, tmp_path):
    store = open_trace_store(tmp_path / "traces.sqlite")
    service = Service([SAMPLE], sample_config, ServeConfig(api_key="k"), lambda p, c: None, tracer=NoOpTracer(),
                      store=store)  # never opened: the route needs no dataset
    spans = sdk_spans(n_docs=3, content_chars=40_000)
    body = protobuf_body(spans)
    assert len(body) > MAX_BODY_BYTES  # larger than a search request may be
    with TestClient(create_app(service, mcp=False), base_url="http://127.0.0.1") as client:
        assert client.post("/v1/traces", content=body, headers=PROTOBUF).status_code == 401
        r = client.post("/v1/traces", content=body, headers={**PROTOBUF, "Authorization": "Bearer k"})
        assert r.status_code == 200, r.text
        r = client.post("/v1/traces", content=body, headers={**PROTOBUF, "Authorization": "Bearer k",
                                                             "Host": "evil.example"})
        assert r.status_code == 421
    assert_stored_as_sent(store, spans)
    service.close()
    store.close()
