"""MCP, driven by the ``mcp`` SDK's own client: over streamable HTTP (mounted at /mcp) and over stdio.

Each transport lists the tools, calls every one, gets a validation error and an
unknown id back as tool errors carrying the error object, and joins a caller's
``traceparent`` sent in the request's ``_meta``.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import cast

import anyio
import httpx
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import RequestParamsMeta
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from serve_helpers import make_service, running

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"
TOOLS = {"search", "search_keyword", "search_vector", "get_chunks", "get_docs", "stats"}
CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{CALLER_TRACE}-00f067aa0ba902b7-01"


@pytest.fixture(scope="module")
def http_server(sample_index_path, sample_config, model):
    from opentelemetry.sdk.trace import TracerProvider

    from searchtrace.retriever.serve.http import create_app

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    service = make_service([SAMPLE], sample_config, sample_index_path, model, provider.get_tracer("test.mcp"))
    service.open()
    with running(create_app(service)) as url:
        yield url, memory
    service.close()


def unanswerable(dataset) -> str:
    return next(q.text for q in dataset.queries if q.category == "unanswerable")


async def exercise(client: Client, dataset) -> dict:
    """Every tool, the errors, the traceparent; returns what the assertions need."""
    out: dict = {}
    listed = (await client.list_tools()).tools
    out["tools"] = {t.name: t for t in listed}
    doc_id = dataset.docs[0].id
    calls = {"search": {"query": dataset.queries[0].text, "top_k": 3},
             "search_keyword": {"query": "Dorian Fleet", "top_k": 3},
             "search_vector": {"query": "hot springs that cure gout", "top_k": 3},
             "get_chunks": {"ids": [doc_id]}, "get_docs": {"ids": [doc_id]}, "stats": {}}
    out["calls"] = {name: await client.call_tool(name, args) for name, args in calls.items()}
    out["weak"] = await client.call_tool("search", {"query": unanswerable(dataset)})
    out["invalid"] = await client.call_tool("search", {"query": "x", "top_k": 501})
    out["unknown_id"] = await client.call_tool("get_docs", {"ids": ["no-such-doc"]})
    out["unknown_tool"] = await client.call_tool("delete_everything", {})
    out["stats_argument"] = await client.call_tool("stats", {"verbose": True})
    out["many_doc_ids"] = await client.call_tool("search", {"query": "x", "doc_ids": ["d"] * 1001})
    out["joined"] = await client.call_tool("search", {"query": "Emberly"}, meta=cast(RequestParamsMeta, {"traceparent": TRACEPARENT}))
    return out


def check(out: dict, dataset) -> None:
    assert set(out["tools"]) == TOOLS
    schema = out["tools"]["search"].input_schema
    assert schema["properties"]["top_k"]["maximum"] == 500 and schema["properties"]["candidates"]["maximum"] == 500
    assert schema["properties"]["query"]["maxLength"] == 8192
    assert schema["properties"]["fusion"]["enum"] == ["dbsf", "rrf", "zscore", "weighted", "keyword_then_dense"]
    assert out["tools"]["get_docs"].input_schema["properties"]["ids"]["maxItems"] == 100
    for name, result in out["calls"].items():
        assert not result.is_error, (name, result.content)
    search = out["calls"]["search"]
    structured = search.structured_content
    assert structured["results"] and len(structured["traceId"]) == 32
    text = search.content[0].text
    first = structured["results"][0]
    assert text.splitlines()[0].startswith(f"1. {first['metadata']['title']} [{first['id']}] — ")
    assert f"{round(100 * first['score'])}% relevant · {first['confidenceBand']}" in text.splitlines()[0]
    assert text.splitlines()[-1] == f"trace {structured['traceId']}"
    for relation in [r for r in structured["results"] if r["component_type"] == "relation"]:
        assert f"{relation['subject']} —{relation['relation']}→ {relation['object']}" in text
    assert out["calls"]["get_docs"].structured_content["documents"][0]["text"] == dataset.docs[0].text
    assert out["calls"]["get_chunks"].structured_content["chunks"][0]["id"] == dataset.docs[0].id
    assert out["calls"]["stats"].structured_content["datasets"]["sample"]["documents"] == len(dataset.docs)
    weak = out["weak"]
    assert weak.structured_content["noConfidentResults"] is True
    assert "No confident match — try: " in weak.content[0].text
    for key, code, field in (("invalid", "VALIDATION_ERROR", "top_k"), ("unknown_id", "NOT_FOUND", "ids"),
                             ("unknown_tool", "NOT_FOUND", "name"), ("stats_argument", "VALIDATION_ERROR", "verbose"),
                             ("many_doc_ids", "VALIDATION_ERROR", "doc_ids")):
        result = out[key]
        assert result.is_error, key
        assert result.structured_content["error"]["code"] == code and result.structured_content["error"]["field"] == field
        assert result.content[0].text.startswith(f"{code} ({field}): ")
    assert out["joined"].structured_content["traceId"] == CALLER_TRACE


def test_mcp_over_streamable_http(http_server, sample_dataset):
    url, memory = http_server
    memory.clear()

    async def main() -> dict:
        async with Client(f"{url}/mcp") as client:
            return await exercise(client, sample_dataset)

    out = anyio.run(main)
    check(out, sample_dataset)
    spans = memory.get_finished_spans()
    root = next(s for s in spans if s.name == "tools/call search" and format(s.context.trace_id, "032x") == CALLER_TRACE)
    assert root.parent.is_remote and root.kind.name == "SERVER" and root.attributes["searchtrace.source"] == "mcp"
    search = next(s for s in spans if s.name == "search" and s.parent and s.parent.span_id == root.context.span_id)
    assert search.attributes["searchtrace.source"] == "mcp"


def test_mcp_http_transport_checks_the_host_header(http_server):
    url, _ = http_server
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    r = httpx.post(f"{url}/mcp", json=body, headers={"host": "evil.example:80",
                                                     "accept": "application/json, text/event-stream"})
    assert r.status_code == 421 and r.json()["error"]["field"] == "Host", r.status_code
    r = httpx.post(f"{url}/mcp", json=body, headers={"origin": "http://evil.example",
                                                     "accept": "application/json, text/event-stream"})
    assert r.status_code == 421 and r.json()["error"]["field"] == "Origin", r.status_code


def test_mcp_over_stdio(sample_index_path, sample_config, sample_dataset):
    from searchtrace.traces import TraceStore

    home = sample_config.home.root
    env = {"PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p),
           "HF_HUB_OFFLINE": "1", "SEARCHTRACE_OTLP": "0", "OTEL_BSP_SCHEDULE_DELAY": "50"}
    params = StdioServerParameters(command=sys.executable, cwd=str(REPO), env=env,
                                   args=["-m", "searchtrace", "serve", "--mcp", "stdio", str(SAMPLE), "--home",
                                         str(home), "--no-progress"])

    async def main() -> dict:
        async with Client(params, read_timeout_seconds=120) as client:
            return await exercise(client, sample_dataset)

    started = time.time_ns()
    out = anyio.run(main)
    check(out, sample_dataset)
    store = TraceStore(home / "traces.sqlite")
    deadline = time.monotonic() + 15
    while (trace := store.load_trace(CALLER_TRACE)) is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert trace is not None
    names = {s.name: s for s in trace.spans}
    assert names["tools/call search"].attributes["searchtrace.source"] == "mcp"
    assert names["search"].parent_id == names["tools/call search"].span_id
    session = names["tools/call search"].attributes["mcp.session.id"]  # one pipe, one session: every call's
    conn = sqlite3.connect(home / "traces.sqlite")
    calls = conn.execute("SELECT DISTINCT session_id FROM traces WHERE root_name LIKE 'tools/call %' AND start_ns >= ?",
                         (started,)).fetchall()
    conn.close()
    assert len(session) == 32 and calls == [(session,)]
    store.close()
