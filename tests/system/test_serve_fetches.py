"""Fetches that follow a search, as ``judge implicit`` reads them: the ``traceId`` a fetch names (HTTP and MCP),
the MCP session minted for a handshake-era client, and the trace store's columns they fill.

One server on the sample (a trace store and an in-memory exporter) for the module; the MCP SDK's own
client drives it in both eras: ``mode="legacy"`` (the initialize handshake, sessions) and the default
(protocol 2026-07-28, no sessions).
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from pathlib import Path

import anyio
import httpx
import pytest
from mcp.client.client import Client
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from serve_helpers import make_service, running

from searchtrace.traces import vocabulary as v

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
QUERY = "Which river runs past Port Vell?"


@pytest.fixture(scope="module")
def served(tmp_path_factory, sample_index_path, sample_config, model):
    from searchtrace.home import Home
    from searchtrace.retriever.serve.http import create_app
    from searchtrace.traces import TraceSettings, make_tracer_provider

    home = Home(tmp_path_factory.mktemp("fetch-home"))
    provider, handles = make_tracer_provider(home, TraceSettings(store=True, schedule_delay_ms=50))
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    service = make_service([SAMPLE], sample_config, sample_index_path, model, provider.get_tracer("test.fetch"),
                           store=handles.store)
    service.open()
    with running(create_app(service)) as url:
        yield url, memory, home
    service.close()
    handles.shutdown()


def _roots(memory, name: str) -> list:
    return [s for s in memory.get_finished_spans() if s.name == name]


def _row(home, trace_id: str) -> tuple:
    """The trace's impression and fetch columns and its source (the server span's), once its root is stored
    (the exporter writes every 50 ms)."""
    deadline = time.monotonic() + 15
    while True:
        try:
            conn = sqlite3.connect(f"file:{home.traces}?mode=ro", uri=True)
            try:
                row = conn.execute("SELECT session_id, result_ids, fetched_ids, fetch_of, dataset, source FROM "
                                   "traces WHERE trace_id = ? AND has_root = 1", (trace_id,)).fetchone()
            finally:
                conn.close()
        except sqlite3.OperationalError:  # not made yet
            row = None
        if row is not None or time.monotonic() > deadline:
            return row
        time.sleep(0.05)


def test_an_http_fetch_names_the_search_it_follows(served):
    url, memory, home = served
    memory.clear()
    with httpx.Client(base_url=url, timeout=60) as client:
        search = client.post("/v1/search", json={"query": QUERY, "top_k": 3}).json()
        shown = [r["id"] for r in search["results"] if r["component_type"] == "chunk"]
        fetch = client.get("/v1/docs", params={"ids": ",".join(shown[1::-1]), "traceId": search["traceId"]})
        assert fetch.status_code == 200, fetch.text
        chunks = client.get("/v1/chunks", params={"ids": shown[0]})  # naming no search: a fetch all the same
        assert chunks.status_code == 200
        for bad in ("ABC", search["traceId"].upper(), "0" * 33):
            r = client.get("/v1/docs", params={"ids": shown[0], "traceId": bad})
            assert r.status_code == 400 and r.json()["error"]["field"] == "traceId", bad
            assert "32 lowercase hex digits" in r.json()["error"]["message"]
        twice = client.get(f"/v1/docs?ids={shown[0]}&traceId={search['traceId']}&traceId={search['traceId']}")
        assert twice.status_code == 400 and twice.json()["error"]["field"] == "traceId"
    [root] = [s for s in _roots(memory, "GET /v1/docs") if s.attributes.get(v.HTTP_RESPONSE_STATUS_CODE) == 200]
    assert root.attributes[v.FETCH_IDS] == tuple(shown[1::-1]) and root.attributes[v.FETCH_OF] == search["traceId"]
    assert root.attributes[v.DATASET] == "sample"
    [other] = _roots(memory, "GET /v1/chunks")
    assert other.attributes[v.FETCH_IDS] == (shown[0],) and v.FETCH_OF not in other.attributes
    assert all(v.FETCH_IDS not in s.attributes for s in _roots(memory, "GET /v1/docs") if s is not root)
    fetch_id = fetch.headers["x-trace-id"]
    assert _row(home, fetch_id) == (None, None, f'["{shown[1]}","{shown[0]}"]', search["traceId"], "sample", "http")
    session, result_ids, *_ = _row(home, search["traceId"])  # every result shown, relations too, in order
    assert session is None and json.loads(result_ids) == [r["id"] for r in search["results"]]


def test_the_openapi_document_and_the_tools_offer_trace_id(served):
    url, *_ = served
    spec = httpx.get(f"{url}/openapi.json").json()
    for path in ("/v1/docs", "/v1/chunks"):
        [param] = [p for p in spec["paths"][path]["get"]["parameters"] if p["name"] == "traceId"]
        assert param["schema"]["pattern"] == "^[0-9a-f]{32}$" and not param["required"]

    async def main() -> dict:
        async with Client(f"{url}/mcp") as client:
            return {t.name: t.input_schema for t in (await client.list_tools()).tools}

    schemas = anyio.run(main)
    for tool in ("get_docs", "get_chunks"):
        assert schemas[tool]["properties"]["traceId"]["pattern"] == "^[0-9a-f]{32}$"
        assert schemas[tool]["required"] == ["ids"]


def test_a_handshake_era_mcp_client_gets_a_session_its_calls_share(served):
    url, memory, home = served
    memory.clear()

    async def main() -> tuple:
        async with Client(f"{url}/mcp", mode="legacy") as client:
            search = await client.call_tool("search", {"query": QUERY, "top_k": 3})
            results = search.structured_content["results"]
            shown = [r["id"] for r in results if r["component_type"] == "chunk"]
            fetch = await client.call_tool("get_docs", {"ids": [shown[-1]]})
            assert not fetch.is_error, fetch.content
            return search.structured_content["traceId"], shown, [r["id"] for r in results]

    trace_id, shown, every = anyio.run(main)
    [search] = _roots(memory, "tools/call search")
    [fetch] = _roots(memory, "tools/call get_docs")
    session = search.attributes[v.MCP_SESSION_ID]
    assert re.fullmatch(r"[0-9a-f]{32}", session) and fetch.attributes[v.MCP_SESSION_ID] == session
    assert fetch.attributes[v.FETCH_IDS] == (shown[-1],) and v.FETCH_OF not in fetch.attributes
    # its stream request (GET) and closing DELETE are answered without a refusal's trace
    assert [s.name for s in memory.get_finished_spans() if s.name.startswith(("GET", "DELETE"))] == []
    row = _row(home, trace_id)
    assert row[0] == session and json.loads(row[1]) == every
    fetch_id = format(fetch.context.trace_id, "032x")
    assert _row(home, fetch_id) == (session, None, f'["{shown[-1]}"]', None, "sample", "mcp")


def test_session_requests_are_answered_without_refusals(served):
    url, memory, _ = served
    memory.clear()
    headers = {"mcp-session-id": "0123456789abcdef0123456789abcdef", "accept": "text/event-stream"}
    assert httpx.delete(f"{url}/mcp", headers=headers).status_code == 204
    stream = httpx.get(f"{url}/mcp", headers=headers)
    assert stream.status_code == 405 and stream.headers["allow"] == "POST, DELETE"
    assert "x-trace-id" not in stream.headers and memory.get_finished_spans() == ()
    refused = httpx.get(f"{url}/mcp", headers={"accept": "text/event-stream"})  # no session: refused, traced
    assert refused.status_code == 405 and refused.headers["x-trace-id"]


def test_a_2026_mcp_client_has_no_session_and_names_the_search_by_trace_id(served):
    url, memory, _ = served
    memory.clear()

    async def main() -> tuple:
        async with Client(f"{url}/mcp") as client:
            search = await client.call_tool("search", {"query": QUERY, "top_k": 3})
            trace_id = search.structured_content["traceId"]
            first = search.structured_content["results"][0]["id"]
            fetch = await client.call_tool("get_chunks", {"ids": [first], "traceId": trace_id})
            bad = await client.call_tool("get_chunks", {"ids": [first], "traceId": "not-a-trace"})
            return trace_id, first, fetch, bad

    trace_id, first, fetch, bad = anyio.run(main)
    assert not fetch.is_error and bad.is_error
    assert bad.structured_content["error"]["field"] == "traceId"
    [search] = _roots(memory, "tools/call search")
    fetches = _roots(memory, "tools/call get_chunks")
    assert v.MCP_SESSION_ID not in search.attributes
    [ok] = [s for s in fetches if v.FETCH_IDS in s.attributes]
    assert ok.attributes[v.FETCH_OF] == trace_id and ok.attributes[v.FETCH_IDS] == (first,)
