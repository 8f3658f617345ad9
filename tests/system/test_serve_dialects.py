"""``searchtrace serve datasets/sample --dialect ...`` as a real process, each dialect called by its own kind of
client: httpx for Huginn's and SingleStore's HTTP routes, the official ``mcp`` client for the MCP tools
(HAWKI's, Huginn's text tool, ProxySQL's behind its token, Concept-RAG's). Every call is a trace whose source is the dialect.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from test_serve_workers import _wait_ready, serving

pytestmark = pytest.mark.slow

TOKEN = "proxysql-system-token"
DIALECTS = ("hawki", "huginn", "proxysql", "singlestore-kag", "concept-rag")


@pytest.fixture(scope="module")
def server(sample_index_path, sample_config):
    flags = [flag for name in DIALECTS for flag in ("--dialect", name)]
    env = {**os.environ, "SEARCHTRACE_PROXYSQL_TOKEN": TOKEN, "SEARCHTRACE_SERVE_TIMEOUT": "30"}
    with serving(sample_config.home.root, *flags, env=env) as served:
        yield _wait_ready(served, workers=None), served, sample_config.home.root


async def _tools(url: str, calls: list[tuple[str, dict[str, Any]]], token: str | None = None) -> dict[str, Any]:
    import httpx2
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"authorization": f"Bearer {token}"} if token else {}
    out: dict[str, Any] = {}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            out["list"] = sorted(t.name for t in (await client.list_tools()).tools)
            for name, args in calls:
                out[f"{name} {json.dumps(args, sort_keys=True)}"] = await client.call_tool(name, args)
    return out


def _call(url: str, calls: list[tuple[str, dict[str, Any]]], token: str | None = None) -> dict[str, Any]:
    return anyio.run(_tools, url, calls, token)


def test_the_announcement_names_the_dialects(server):
    _, served, _ = server
    assert "dialects: hawki, huginn, proxysql, singlestore-kag, concept-rag" in served.stderr


def test_hawki_query_search_over_the_mcp_client(server):
    url, _, _ = server
    got = _call(f"{url}/mcp/hawki", [("query-search", {"query": "Who founded the Tide Council?", "top_k": 6}),
                                      ("query-search", {"query": "x", "top_k": 51})])
    assert got["list"] == ["query-search"]
    answer = got['query-search {"query": "Who founded the Tide Council?", "top_k": 6}']
    body = answer.structured_content
    assert not answer.is_error and set(body) == {"results", "kg", "rewrite_terms"}
    assert len(body["results"]) == 6  # top_k: passages and relation hits together
    chunks = [r for r in body["results"] if r["component_type"] == "chunk"]
    assert chunks and all(isinstance(r["metadata"]["tags"], str) and "," in r["metadata"]["tags"] for r in chunks)
    assert all(set(t) == {"subject", "relation", "object"} for t in body["kg"])
    refused = got['query-search {"query": "x", "top_k": 51}']
    assert refused.is_error and "[1, 50]" in refused.content[0].text


def test_huginn_http_and_its_mcp_text(server):
    url, _, _ = server
    r = httpx.get(f"{url}/api/search", params={"q": "Who founded the Tide Council?", "limit": 3}, timeout=60)
    assert r.status_code == 200, r.text
    body = r.json()
    assert len(body["results"]) == 3 and body["traceId"] == r.headers["x-trace-id"]
    assert isinstance(body["bestScore"], float) and body["results"][0]["relevance"] <= body["bestScore"]
    assert {"id", "relevance", "confidenceBand", "snippet", "graph_context"} <= set(body["results"][0])
    empty = httpx.get(f"{url}/api/search", params={"q": "quantum zebra lasagna recipes", "min_relevance": 0.9},
                      timeout=60).json()  # found something below the bar, not nothing
    assert empty["results"] == [] and empty["noConfidentResults"] is True and 0 < empty["bestScore"] < 0.9
    assert set(empty["retryHints"]) == {"detectedEntities", "relatedTerms", "narrowerQuery", "broaderQuery"}
    got = _call(f"{url}/mcp/huginn", [("search_knowledge", {"query": "Who founded the Tide Council?", "limit": 2})])
    text = got['search_knowledge {"limit": 2, "query": "Who founded the Tide Council?"}'].content[0].text
    assert text.startswith("1. ") and "% relevant · " in text and "\n2. " in text and "\n3. " not in text
    assert text.splitlines()[-1].startswith("trace ")


def test_singlestore_kag_search_over_http(server):
    url, _, _ = server
    r = httpx.post(f"{url}/kag-search", json={"query": "Who founded the Tide Council?", "top_k": 4}, timeout=60)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["generated_response"] is None and len(body["results"]) == 4
    assert body["relationships"] and set(body["relationships"][0]) >= {"source", "relation", "target", "confidence"}
    first = body["results"][0]
    assert first["combined_score"] >= body["results"][1]["combined_score"] and first["vector_score"] > 0


def test_proxysql_tools_behind_their_token(server):
    url, _, _ = server
    refused = httpx.post(f"{url}/mcp/rag", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=30)
    assert refused.status_code == 401
    calls = [("rag.search_fts", {"query": "Tide Council", "k": 3, "offset": 1}),
             ("rag.search_fts", {"query": "Tide Council", "k": 4}),
             ("rag.search_hybrid", {"query": "Tide Council", "k": 3, "mode": "fuse"}),
             ("rag.search_vector", {"query_text": "Tide Council", "k": 500}),
             ("rag.get_docs", {"doc_ids": ["gaz-hallowmere"]}),
             ("rag.admin.stats", {}),
             ("rag.fetch_from_source", {"doc_ids": ["gaz-hallowmere"]})]
    got = _call(f"{url}/mcp/rag", calls, TOKEN)
    assert got["list"] == ["rag.admin.stats", "rag.fetch_from_source", "rag.get_chunks", "rag.get_docs",
                           "rag.search_fts", "rag.search_hybrid", "rag.search_vector"]
    answers = [got[f"{name} {json.dumps(args, sort_keys=True)}"] for name, args in calls]
    page, whole, hybrid, vector, docs, stats, refetch = answers
    assert [r["doc_id"] for r in page.structured_content["results"]] == [
        r["doc_id"] for r in whole.structured_content["results"]][1:]  # offset 1, k 3: ranks 2-4
    assert len(hybrid.structured_content["results"]) == 3
    assert vector.structured_content["stats"]["k"] == 10 and len(vector.structured_content["results"]) == 10
    assert docs.structured_content["docs"][0]["title"] == "Hallowmere"
    assert stats.structured_content["sources"][0]["documents"] == 216
    assert refetch.is_error and "not supported" in refetch.content[0].text


def test_concept_rag_tools_at_their_own_endpoint(server):
    url, _, _ = server
    calls = [("broad_chunks_search", {"text": "Who founded the Tide Council?"}),
             ("concept_search", {"concept": "no such concept at all"})]
    got = _call(f"{url}/mcp/concept-rag", calls)
    assert got["list"] == sorted(["concept_search", "source_concepts", "concept_sources", "extract_concepts",
                                  "list_categories", "category_search", "list_concepts_in_category",
                                  "catalog_search", "chunks_search", "broad_chunks_search"])
    found, refused = (got[f"{name} {json.dumps(args, sort_keys=True)}"] for name, args in calls)
    chunks = json.loads(found.content[0].text)
    assert not found.is_error and found.structured_content is None  # one text block, as the seed answers
    assert 0 < len(chunks) <= 30 and {"text", "source", "score", "expanded_terms"} <= set(chunks[0])
    assert refused.is_error and json.loads(refused.content[0].text)["error"]["code"] == "CONCEPT_NOT_FOUND"


def test_every_dialect_call_is_a_trace_with_the_dialect_as_its_source(server):
    url, _, home = server
    ids = {name: httpx.get(f"{url}/api/search", params={"q": f"harbour {name}"}, timeout=60).headers["x-trace-id"]
           for name in ("one", "two")}
    kag = httpx.post(f"{url}/kag-search", json={"query": "harbour"}, timeout=60).headers["x-trace-id"]
    from searchtrace.traces import TraceFilter, TraceStore

    store = TraceStore(Path(home) / "traces.sqlite")
    try:
        huginn = {t.trace_id for t in store.list_traces(TraceFilter(sources=("huginn",), limit=1000))}
        singlestore = {t.trace_id for t in store.list_traces(TraceFilter(sources=("singlestore-kag",), limit=1000))}
        hawki = store.list_traces(TraceFilter(sources=("hawki",), limit=1000))
        concept = store.list_traces(TraceFilter(sources=("concept-rag",), limit=1000))
    finally:
        store.close()
    assert set(ids.values()) <= huginn and kag in singlestore and not huginn & singlestore
    assert hawki  # the HAWKI test's calls
    assert concept  # the Concept-RAG test's calls

