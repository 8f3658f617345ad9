"""The HTTP API against uvicorn on an ephemeral loopback port: every endpoint and status code, traced.

One server (the sample dataset, a trace store, an in-memory span exporter, a
reranker that sleeps on queries saying "slowly", a 0.5 s timeout and 3 search
slots) is started once for the module.
"""

from __future__ import annotations

import concurrent.futures
import time
from pathlib import Path

import httpx
import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from serve_helpers import SlowReranker, make_service, running

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"

TIMEOUT_S = 0.5
SLOTS = 3
CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c"
CALLER_SPAN = "b7ad6b7169203331"


@pytest.fixture(scope="module")
def server(tmp_path_factory, sample_index_path, sample_config, model):
    from searchtrace.home import Home
    from searchtrace.retriever.serve.batcher import BatchingEncoder
    from searchtrace.retriever.serve.http import create_app
    from searchtrace.traces import TraceSettings, make_tracer_provider

    home = Home(tmp_path_factory.mktemp("serve-home"))
    provider, handles = make_tracer_provider(home, TraceSettings(store=True, schedule_delay_ms=50))
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("test.serve")
    encoder = BatchingEncoder(model)
    service = make_service([SAMPLE], sample_config, sample_index_path, encoder, tracer, store=handles.store,
                           reranker=SlowReranker(1.5), timeout_s=TIMEOUT_S, max_inflight=SLOTS,
                           dashboard_url="http://dash.example:8501")
    service.open()
    with running(create_app(service)) as url:
        with httpx.Client(base_url=url, timeout=30) as client:
            yield client, memory, handles, service, encoder
    service.close()
    encoder.close()
    handles.shutdown()


def _wait_idle(service):
    deadline = time.monotonic() + 10
    while service._slots._value < SLOTS and time.monotonic() < deadline:  # slow searches still finishing
        time.sleep(0.05)


def test_search_answers_the_response_contract_with_trace_id_and_url(server, sample_dataset):
    client, memory, *_ = server
    query = sample_dataset.queries[0]
    r = client.post("/v1/search", json={"query": query.text, "top_k": 3})
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) >= {"results", "kg", "bestScore", "noConfidentResults", "retryHints", "traceId", "mode"}
    assert 1 <= len([x for x in body["results"] if x["component_type"] == "chunk"]) <= 3
    assert r.headers["x-trace-id"] == body["traceId"] and len(body["traceId"]) == 32
    assert body["traceUrl"] == f"http://dash.example:8501/traces?trace={body['traceId']}"


def test_one_trace_per_request_a_server_span_over_the_search_span(server):
    client, memory, *_ = server
    memory.clear()
    body = client.post("/v1/search", json={"query": "Emberly springs", "top_k": 2}).json()
    spans = [s for s in memory.get_finished_spans() if format(s.context.trace_id, "032x") == body["traceId"]]
    by_name = {s.name: s for s in spans}
    root, search = by_name["POST /v1/search"], by_name["search"]
    assert root.parent is None and root.kind.name == "SERVER"
    assert search.parent.span_id == root.context.span_id
    assert root.attributes["searchtrace.source"] == "http" == search.attributes["searchtrace.source"]
    assert root.attributes["http.response.status_code"] == 200
    assert {s.name for s in spans if s.parent and s.parent.span_id == search.context.span_id} >= {"embed", "fuse"}


def test_a_callers_traceparent_is_joined(server):
    client, memory, *_ = server
    memory.clear()
    r = client.post("/v1/search", json={"query": "Emberly springs"},
                    headers={"traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"})
    assert r.json()["traceId"] == CALLER_TRACE
    root = next(s for s in memory.get_finished_spans() if s.name == "POST /v1/search")
    assert format(root.context.trace_id, "032x") == CALLER_TRACE
    assert root.parent.is_remote and format(root.parent.span_id, "016x") == CALLER_SPAN


def test_keyword_and_vector_endpoints_run_one_stage_and_skip_the_others(server):
    client, memory, *_ = server
    for route, ran, skipped in (("/v1/search/keyword", "keyword", "dense"), ("/v1/search/vector", "dense", "keyword")):
        memory.clear()
        body = client.post(route, json={"query": "Dorian Fleet physician", "top_k": 3}).json()
        assert body["results"], route
        spans = {s.name: s for s in memory.get_finished_spans()}
        assert "searchtrace.stage.skipped" in spans[skipped].attributes, route
        assert "searchtrace.stage.skipped" not in spans[ran].attributes, route
        assert spans["graph"].attributes.get("searchtrace.stage.skipped"), route


def test_fusion_field_picks_keyword_then_dense(server):
    client, memory, *_ = server
    memory.clear()
    assert client.post("/v1/search", json={"query": "Emberly", "fusion": "keyword_then_dense"}).status_code == 200
    fuse = next(s for s in memory.get_finished_spans() if s.name == "fuse")
    assert fuse.attributes["searchtrace.fusion.method"] == "keyword_then_dense"
    bad = client.post("/v1/search", json={"query": "Emberly", "fusion": "best"})
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "fusion"
    assert client.post("/v1/search/keyword", json={"query": "x", "fusion": "fuse"}).status_code == 400


def test_every_fusion_name_of_the_cli_is_the_same_fusion_over_http(server, sample_config, capsys):
    """One vocabulary (issue 24): ``fusion`` takes the names ``--fusion`` takes, and ranks as the CLI does."""
    import json

    from searchtrace.cli import main
    from searchtrace.retriever.types import FusionMethod

    client, memory, *_ = server
    query = "Which captain brought her brig through the Great Gale?"
    for method in FusionMethod:
        memory.clear()
        served = client.post("/v1/search", json={"query": query, "fusion": method.value, "top_k": 5})
        assert served.status_code == 200, served.text
        fuse = next(s for s in memory.get_finished_spans() if s.name == "fuse")
        assert fuse.attributes["searchtrace.fusion.method"] == method.value
        assert main(["search", query, "--dataset", str(SAMPLE), "--home", str(sample_config.home.root), "--json",
                     "--top-k", "5", "--fusion", method.value]) == 0
        cli = json.loads(capsys.readouterr().out)
        assert [r["id"] for r in served.json()["results"]] == [r["id"] for r in cli["results"]], method
    old = client.post("/v1/search", json={"query": query, "fusion": "fuse"})
    assert old.status_code == 400 and "dbsf, rrf, zscore, weighted, keyword_then_dense" in old.json()["error"]["message"]


def test_an_unknown_field_is_refused_with_every_field_the_schema_allows(server):
    client, *_ = server
    paths = client.get("/openapi.json").json()["paths"]
    for route, extra in (("/v1/search", {"dataset", "fusion"}), ("/v1/search/keyword", {"dataset"})):
        schema = paths[route]["post"]["requestBody"]["content"]["application/json"]["schema"]
        error = client.post(route, json={"query": "x", "colour": "red"}).json()["error"]
        listed = error["message"].split("allowed fields: ", 1)[1].split(", ")
        assert listed == list(schema["properties"]) and extra <= set(listed), route


@pytest.mark.parametrize("body,field", [({"query": "x", "top_k": 501}, "top_k"), ({"query": ""}, "query"),
                                        ({"query": "x", "colour": "red"}, "colour"), ([1, 2], None)])
def test_invalid_requests_answer_400_with_the_error_object(server, body, field):
    client, *_ = server
    r = client.post("/v1/search", json=body)
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "VALIDATION_ERROR" and r.json()["error"]["field"] == field
    assert "Traceback" not in r.text


def test_malformed_json_is_400(server):
    client, *_ = server
    r = client.post("/v1/search", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]["message"]


def test_unknown_dataset_ids_and_routes_are_404(server):
    client, *_ = server
    r = client.post("/v1/search", json={"query": "x", "dataset": "nope"})
    assert r.status_code == 404 and r.json()["error"] == {
        "code": "NOT_FOUND", "message": "unknown dataset 'nope'; served: sample", "field": "dataset"}
    r = client.get("/v1/docs", params={"ids": "bio-dorian-fleet,no-such-doc"})
    assert r.status_code == 404 and "no-such-doc" in r.json()["error"]["message"]
    assert client.get("/v2/nothing").json()["error"]["code"] == "NOT_FOUND"


def test_docs_and_chunks_by_id_bounded(server, sample_dataset):
    client, *_ = server
    ids = [d.id for d in sample_dataset.docs[:3]]
    docs = client.get("/v1/docs", params={"ids": ",".join(ids)}).json()["documents"]
    assert [d["id"] for d in docs] == ids
    assert docs[0]["text"] == sample_dataset.docs[0].text
    chunks = client.get("/v1/chunks", params=[("ids", ids[0]), ("ids", ids[1])]).json()["chunks"]
    assert [c["id"] for c in chunks] == ids[:2] and chunks[0]["component_type"] == "chunk"
    too_many = client.get("/v1/docs", params={"ids": ",".join(f"d{i}" for i in range(101))})
    assert too_many.status_code == 400 and too_many.json()["error"]["field"] == "ids"
    assert client.get("/v1/docs").status_code == 400


def test_the_api_docs_load_nothing_from_another_host(server):
    """Issue 24: /docs loaded Swagger UI from a CDN, blank on a machine without internet."""
    import re
    from urllib.parse import urljoin, urlsplit

    client, *_ = server
    for page in ("/docs", "/redoc"):
        html = client.get(page)
        assert html.status_code == 200 and "text/html" in html.headers["content-type"], page
        refs = re.findall(r"""(?:src|href)=["']([^"']+)["']|url: ?["']([^"']+)["']""", html.text)
        urls = [a or b for a, b in refs]
        assert any(u.endswith(".js") for u in urls), (page, urls)
        for url in urls:
            absolute = urljoin(str(client.base_url) + page, url)
            assert urlsplit(absolute).netloc == urlsplit(str(client.base_url)).netloc, (page, url)  # ours only
            assert client.get(absolute).status_code == 200, (page, url)


MCP_ACCEPT = "application/json, text/event-stream"
TOOLS_LIST = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}'


@pytest.mark.parametrize("method,path,headers,body,status,code", [
    ("POST", "/v1/search", {"content-type": "application/json"}, b'{"query": "' + b"x" * 70_000 + b'"}', 413,
     "PAYLOAD_TOO_LARGE"),
    ("GET", "/v1/nowhere", {}, b"", 404, "NOT_FOUND"),
    ("PUT", "/v1/search", {}, b"", 405, "VALIDATION_ERROR"),
    ("GET", "/v1/docs", {}, b"", 400, "VALIDATION_ERROR"),
    ("POST", "/mcp", {"accept": "text/html", "content-type": "application/json"}, TOOLS_LIST, 406, "VALIDATION_ERROR"),
    ("POST", "/mcp", {"accept": MCP_ACCEPT, "content-type": "text/plain"}, TOOLS_LIST, 400, "VALIDATION_ERROR"),
    ("POST", "/mcp", {"accept": MCP_ACCEPT, "content-type": "application/json"}, b"not json", 400,
     "VALIDATION_ERROR"),
    ("GET", "/mcp", {"accept": "text/event-stream"}, b"", 405, "VALIDATION_ERROR"),
])
def test_every_refusal_is_the_error_object_with_its_trace(server, method, path, headers, body, status, code):
    """Issue 24: a 413 had no x-trace-id and the MCP transport's refusals were plain text or JSON-RPC (a GET
    held its connection open): each is the error object now, with a trace recording it."""
    client, memory, *_ = server
    memory.clear()
    r = client.request(method, path, headers=headers, content=body, timeout=5)
    assert r.status_code == status and r.json()["error"]["code"] == code, r.text
    trace_id = r.headers["x-trace-id"]
    [span] = [s for s in memory.get_finished_spans() if format(s.context.trace_id, "032x") == trace_id]
    assert span.attributes["searchtrace.error.code"] == code
    assert span.attributes["http.response.status_code"] == status
    if status == 405:
        assert r.headers["allow"]


def test_oversize_body_is_413_announced_or_streamed(server):
    client, *_ = server
    big = {"query": "x" * (70 * 1024)}
    r = client.post("/v1/search", json=big)
    assert r.status_code == 413 and r.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"

    def chunks():
        for _ in range(80):
            yield b" " * 1024

    r = client.post("/v1/search", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_a_slow_search_answers_504_and_marks_its_span(server):
    client, memory, handles, service, _ = server
    _wait_idle(service)
    memory.clear()
    started = time.monotonic()
    r = client.post("/v1/search", json={"query": "the springs slowly"})
    assert r.status_code == 504 and r.json()["error"]["code"] == "TIMEOUT"
    assert time.monotonic() - started < 1.4  # answered at the timeout, not when the search ended
    root = next(s for s in memory.get_finished_spans() if s.name == "POST /v1/search")
    assert root.status.status_code.name == "ERROR" and root.attributes["searchtrace.timed_out"] is True
    assert root.attributes["http.response.status_code"] == 504


def test_saturated_server_answers_429_with_retry_after(server):
    client, memory, handles, service, _ = server
    _wait_idle(service)
    with concurrent.futures.ThreadPoolExecutor(SLOTS) as pool:
        slow = [pool.submit(client.post, "/v1/search", json={"query": f"slowly {i}"}) for i in range(SLOTS)]
        time.sleep(0.2)  # the slow searches hold every slot for 1.5 s
        r = client.post("/v1/search", json={"query": "one more"})
        assert r.status_code == 429 and r.json()["error"]["code"] == "OVERLOADED"
        assert r.headers["retry-after"] == "1"
        assert [f.result().status_code for f in slow] == [504] * SLOTS
    _wait_idle(service)
    assert client.post("/v1/search", json={"query": "one more"}).status_code == 200


def test_stats_count_searches_and_read_latency_from_the_trace_store(server):
    client, memory, handles, service, _ = server
    client.post("/v1/search", json={"query": "Emberly"})
    handles.flush_store()
    stats = client.get("/v1/stats").json()
    assert stats["maxTopK"] == 500  # what eval --target asks for at most: as deep as a stage's candidates
    sample = stats["datasets"]["sample"]
    assert sample["documents"] == 216 and sample["triples"] > 0 and len(sample["indexKey"]) >= 8
    assert sample["model"].endswith("all-MiniLM-L6-v2")
    assert stats["searchesServed"] == service.searches_served >= 1
    latency = stats["latencyMs"]
    assert latency["traces"] >= 1 and latency["p50"] > 0


def test_probes_and_openapi(server):
    client, *_ = server
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json()["ready"] is True
    spec = client.get("/openapi.json").json()
    assert {"/v1/search", "/v1/search/keyword", "/v1/search/vector", "/v1/docs", "/v1/chunks", "/v1/stats"} <= set(
        spec["paths"])
    schema = spec["paths"]["/v1/search"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert schema["properties"]["top_k"]["maximum"] == 500 and schema["properties"]["candidates"]["maximum"] == 500
    assert client.get("/docs").status_code == 200
    assert "access-control-allow-origin" not in client.get("/healthz", headers={"origin": "http://evil.test"}).headers


def test_traces_in_the_store_equal_requests(server):
    client, memory, handles, service, _ = server
    _wait_idle(service)
    handles.flush_store()
    before = handles.store.count()
    for i in range(5):
        assert client.post("/v1/search", json={"query": f"Emberly {i}"}).status_code == 200
    handles.flush_store()
    assert handles.store.count() == before + 5


# --- the API key, a dataset still opening ---------------------------------------------------


def test_api_key_401_without_or_with_a_wrong_key(sample_index_path, sample_config, model):
    from opentelemetry.trace import NoOpTracer

    from searchtrace.retriever.serve.http import create_app

    service = make_service([SAMPLE], sample_config, sample_index_path, model, NoOpTracer(), api_key="s3cret")
    service.open()
    with running(create_app(service, mcp=False)) as url, httpx.Client(base_url=url) as client:
        for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": "Basic s3cret"}):
            r = client.post("/v1/search", json={"query": "Emberly"}, headers=headers)
            assert r.status_code == 401 and r.json()["error"]["code"] == "UNAUTHORIZED"
            assert r.headers["www-authenticate"].startswith("Bearer")
        ok = client.post("/v1/search", json={"query": "Emberly"}, headers={"authorization": "Bearer s3cret"})
        assert ok.status_code == 200
        assert client.get("/healthz").status_code == 200  # probes stay open
    service.close()


def test_not_ready_is_503_backend_unavailable(sample_config):
    from opentelemetry.trace import NoOpTracer

    from searchtrace.retriever.serve.config import ServeConfig
    from searchtrace.retriever.serve.http import create_app
    from searchtrace.retriever.serve.service import Service

    service = Service([SAMPLE], sample_config, ServeConfig(), lambda p, c: None, tracer=NoOpTracer())  # never opened
    with running(create_app(service, mcp=False)) as url, httpx.Client(base_url=url) as client:
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 503
        r = client.post("/v1/search", json={"query": "Emberly"})
        assert r.status_code == 503 and r.json()["error"]["code"] == "BACKEND_UNAVAILABLE"
    service.close()


def test_refuses_a_non_loopback_host_without_an_api_key(monkeypatch, capsys):
    from searchtrace.cli import main
    from searchtrace.errors import ConfigError
    from searchtrace.retriever.serve.config import ServeConfig

    monkeypatch.delenv("SEARCHTRACE_API_KEY", raising=False)
    assert main(["serve", "--host", "0.0.0.0", "datasets/sample"]) == 2
    assert "SEARCHTRACE_API_KEY" in capsys.readouterr().err
    with pytest.raises(ConfigError):
        ServeConfig(host="10.1.2.3")
    assert ServeConfig(host="10.1.2.3", api_key="k").host == "10.1.2.3"
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        assert ServeConfig(host=host).api_key is None


@pytest.mark.parametrize("path", ["/v1/stats", "/v1/docs?ids=x", "/mcp", "/no/such/route"])
def test_a_host_that_is_not_this_servers_is_refused_on_every_route(server, path):
    """DNS rebinding: a page on another name reaches the loopback server with that name in Host."""
    client = server[0]
    r = client.get(path, headers={"host": "rebind.example:8765"})
    assert r.status_code == 421
    assert r.json() == {"error": {"code": "VALIDATION_ERROR", "field": "Host", "message": r.json()["error"]["message"]}}
    assert "rebind.example" in r.json()["error"]["message"]
    assert client.post("/v1/search", json={"query": "harbour"}, headers={"host": "rebind.example"}).status_code == 421


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.1:1", "localhost", "LOCALHOST:8765", "[::1]", "[::1]:80"])
def test_the_loopback_names_are_accepted_with_or_without_a_port(server, host):
    assert server[0].get("/v1/stats", headers={"host": host}).status_code == 200


def test_mcp_accepts_a_loopback_host_without_a_port(server):
    client = server[0]
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "test", "version": "0"}}}
    r = client.post("/mcp", json=hello, headers={"host": "127.0.0.1", "accept": "application/json, text/event-stream"})
    assert r.status_code == 200, r.text
    assert r.json()["result"]["serverInfo"]["name"] == "searchtrace"


def test_an_origin_that_is_not_this_servers_is_refused(server):
    client = server[0]
    refused = client.get("/v1/stats", headers={"origin": "http://rebind.example"})
    assert refused.status_code == 421 and refused.json()["error"]["field"] == "Origin"
    assert client.get("/v1/stats", headers={"origin": "http://localhost:8501"}).status_code == 200
    assert client.get("/healthz", headers={"host": "rebind.example"}).status_code == 200  # the probes: any name


def test_a_wrong_method_says_which_are_allowed_and_any_body_is_bounded(server):
    client = server[0]
    wrong = client.get("/v1/search")
    assert wrong.status_code == 405 and "POST" in wrong.headers["allow"]
    assert wrong.json()["error"]["code"] == "VALIDATION_ERROR"
    big = client.request("GET", "/v1/stats", content=b"x" * (65 * 1024))
    assert big.status_code == 413 and big.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"


def test_null_or_empty_server_fields_are_refused_by_name(server):
    client = server[0]
    for field, value in (("dataset", None), ("dataset", ""), ("fusion", None)):
        r = client.post("/v1/search", json={"query": "harbour", field: value})
        assert r.status_code == 400 and r.json()["error"]["field"] == field, (field, value, r.text)
    r = client.post("/v1/search", json={"query": "harbour", "top_k": None})
    assert r.status_code == 400 and r.json()["error"]["field"] == "top_k"  # never a 500
