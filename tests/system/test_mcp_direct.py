"""MCP targets asked directly (``targets/lean.py``) and through the ``mcp`` SDK's client read alike: the seed
servers' answers (JSON or event streams, with a session or without, a Bearer token, a stdio child), their tool
errors and refused calls, give the same responses and the same errors either way, and the direct client keeps
every one. What it does not read (a block that is not text, a tool with an output schema the SDK checks, a
server's request) is asked through the SDK from then on, with the SDK's own answer or error."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.server.lowlevel import Server
from seed_servers import PROXYSQL_TOKEN, _mcp_app, hawki_app, proxysql_app, ranking
from serve_helpers import running

from searchtrace.errors import SearchtraceError
from searchtrace.evals.runs.targets import open_shaped
from searchtrace.evals.runs.targets.mcp import McpShaped

TESTS = Path(__file__).resolve().parents[1]
CONCEPT_RAG = f"{sys.executable} {TESTS / 'concept_rag_server.py'}"
QUERIES = ["harbour", "ferry lamps", "crash please", "fail please", "harbour"]


def outcome(search: Any, query: str) -> Any:
    """The response, or the error's type, code and words."""
    try:
        return search({"query": query, "top_k": 30})
    except SearchtraceError as exc:
        return type(exc).__name__, exc.code, exc.message


def both(spec: str) -> tuple[list[Any], list[Any], bool]:
    """Each query's outcome asked directly and through the SDK, and whether the direct client kept every one."""
    direct, sdk = open_shaped(spec), open_shaped(spec)
    assert isinstance(direct, McpShaped) and isinstance(sdk, McpShaped)
    sdk.lean = None  # the careful path alone
    try:
        mine, theirs = [outcome(direct, q) for q in QUERIES], [outcome(sdk, q) for q in QUERIES]
        return mine, theirs, direct.lean is not None
    finally:
        direct.close()
        sdk.close()


@contextmanager
def seed(name: str) -> Iterator[str]:
    """The target spec of a seed server in one of its shapes."""
    seen: list[dict] = []
    if name == "concept-rag stdio":
        yield f"target-profile:concept-rag {CONCEPT_RAG}"
        return
    if name == "proxysql":
        with running(proxysql_app(seen)) as url:
            yield f"target-profile:proxysql {url}/mcp/rag"
        return
    json_response, stateless = {"hawki json": (True, True), "hawki events": (False, True),
                                "hawki session": (True, False), "hawki session events": (False, False)}[name]
    with running(hawki_app(seen, json_response=json_response, stateless=stateless)) as url:
        yield f"target-profile:hawki {url}/mcp/hawki"


@pytest.mark.parametrize("name", ["hawki json", "hawki events", "hawki session", "hawki session events", "proxysql",
                                  "concept-rag stdio"])
def test_every_seed_answer_and_error_is_read_directly_as_the_sdk_reads_it(name, monkeypatch):
    monkeypatch.setenv("PROXYSQL_MCP_TOKEN", PROXYSQL_TOKEN)
    with seed(name) as spec:
        mine, theirs, kept = both(spec)
    assert mine == theirs
    assert kept
    assert [r["id"] for r in mine[0]["results"]][:3] == ranking("harbour")[:3]
    assert name == "proxysql" or any(isinstance(o, tuple) for o in mine)  # an error among them, read alike


# -- what the direct client leaves to the SDK -------------------------------------------------------------------

def shaped_server(answer: Callable[[str], types.CallToolResult], output_schema: dict | None = None,
                  ask_back: types.PingRequest | types.ListRootsRequest | None = None) -> Server[Any]:
    """A HAWKI-shaped tool (``query-search``) whose result for a query is ``answer``'s, after asking the client
    ``ask_back`` inside the call's own event stream when given."""
    from mcp.shared.message import ServerMessageMetadata

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="query-search", input_schema={"type": "object"},
                                                       output_schema=output_schema)])

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if ask_back is not None:  # the client must answer before the call is
            try:
                await ctx.session.send_request(ask_back, types.EmptyResult if isinstance(ask_back, types.PingRequest)
                                               else types.ListRootsResult,
                                               metadata=ServerMessageMetadata(related_request_id=ctx.request_id))
            except Exception as exc:  # the client refused (no roots): the call's text says so
                return types.CallToolResult(content=[types.TextContent(text=f"asked back: {exc}")], is_error=True)
        return answer(str((params.arguments or {})["query"]))

    return Server("shaped", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def hawki_result(query: str, extra: list[Any] | None = None) -> types.CallToolResult:
    payload = {"results": [{"metadata": {"url": d}, "content": d} for d in ranking(query)[:10]]}
    return types.CallToolResult(content=[types.TextContent(text=json.dumps(payload)), *(extra or [])],
                                structured_content=payload)


IMAGE = types.ImageContent(data="aGk=", mime_type="image/png")
SCHEMA = {"type": "object", "properties": {"results": {"type": "array"}}, "required": ["results"]}


@pytest.mark.parametrize(("server", "json_response", "direct"), [
    (shaped_server(lambda q: hawki_result(q, [IMAGE])), True, False),
    (shaped_server(lambda q: hawki_result(q), output_schema=SCHEMA), True, False),
    (shaped_server(lambda q: types.CallToolResult(content=[], structured_content={"results": "none"}),
                   output_schema=SCHEMA), True, False),
    (shaped_server(hawki_result, ask_back=types.ListRootsRequest()), False, False),
    (shaped_server(hawki_result, ask_back=types.PingRequest()), False, True),
], ids=["an image block", "an output schema", "an answer its schema refuses", "the server asks for roots",
        "the server pings"])
def test_what_the_direct_client_does_not_read_is_asked_through_the_sdk(server, json_response, direct):
    """Each case's answers agree; the direct client keeps only the server's ping (answered, as the SDK does)."""
    with running(_mcp_app(server, "/mcp/hawki", json_response=json_response, stateless=False)) \
            as url:
        mine, theirs, kept = both(f"target-profile:hawki {url}/mcp/hawki")
    assert mine == theirs
    assert kept is direct
    if isinstance(mine[0], tuple):  # the SDK's own failure, in its words: its output schema check, or no roots
        assert "Invalid structured content" in mine[0][2] or "asked back" in mine[0][2]
    else:
        assert [r["id"] for r in mine[0]["results"]] == ranking("harbour")[:10]


def test_a_session_the_server_ended_is_http_404_and_the_next_query_opens_a_new_one():
    """A stateful server forgets the session (restarted, or the session expired): that query fails as HTTP
    404, as through the SDK, and the next one is answered on a new session."""
    import httpx

    seen: list[dict] = []
    with running(hawki_app(seen, stateless=False)) as url:
        search = open_shaped(f"target-profile:hawki {url}/mcp/hawki")
        try:
            assert search({"query": "harbour", "top_k": 5})["results"]
            lean = search.lean
            assert lean is not None and lean._headers is not None
            first = lean._headers["Mcp-Session-Id"]
            httpx.delete(f"{url}/mcp/hawki", headers={"Mcp-Session-Id": first}).raise_for_status()
            failed = outcome(search, "ferry")
            assert failed[0] == "SearchFailed" and failed[2].endswith("HTTP 404")
            assert [r["id"] for r in search({"query": "ferry", "top_k": 5})["results"]] == ranking("ferry")[:5]
            assert search.lean is lean and lean._headers["Mcp-Session-Id"] != first
        finally:
            search.close()


@pytest.mark.parametrize(("query", "direct"), [("ping please", True), ("roots please", False)])
def test_a_stdio_server_asking_the_client_back_is_answered_alike(query, direct):
    """Over stdio the server's ping is answered directly; any other request of the server's (roots) is left to
    the SDK, which starts its own child and answers it; the outcomes agree either way."""
    spec = f"target-profile:concept-rag {CONCEPT_RAG}"
    direct_search, sdk = open_shaped(spec), open_shaped(spec)
    assert isinstance(direct_search, McpShaped) and isinstance(sdk, McpShaped)
    sdk.lean = None
    try:
        mine = [outcome(direct_search, q) for q in (query, "harbour")]
        assert mine == [outcome(sdk, q) for q in (query, "harbour")]
        assert (direct_search.lean is not None) is direct
    finally:
        direct_search.close()
        sdk.close()


def test_calls_in_flight_when_the_target_moves_to_the_sdk_are_asked_there_not_failed():
    """Four threads share one stdio child; one answer holds an image block, so the direct client is closed (its
    child stopped) under the calls in flight: each of them is asked again through the SDK, none fails."""
    from concurrent.futures import ThreadPoolExecutor

    search = open_shaped(f"target-profile:concept-rag {CONCEPT_RAG}")
    assert isinstance(search, McpShaped)
    queries = ["harbour", "ferry", "lamps", "salt"] * 3
    queries.insert(5, "image please")
    try:
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(lambda q: outcome(search, q), queries))
        assert search.lean is None
    finally:
        search.close()
    assert all(isinstance(o, dict) for o in got), [o for o in got if not isinstance(o, dict)]
    assert [[r["id"] for r in o["results"]] for o in got] == [ranking(q)[:12] for q in queries]
