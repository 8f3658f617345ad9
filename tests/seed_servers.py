"""Small servers answering exactly the five seed systems' contracts (``../shared/seeds/``), for the target tests.

Each gives a fixed, known ranking per query (:func:`ranking`: the corpus's ids
ordered by a hash of the query and the id), so an eval through a built-in
profile can be checked against it. Each records what it was asked (the
request, its ``traceparent``). Huginn and SingleStore KAG are HTTP (Starlette),
HAWKI and ProxySQL are MCP over streamable HTTP (the ``mcp`` SDK's low-level
server); Concept-RAG is MCP over stdio (``concept_rag_server.py``, a child).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

SAMPLE = Path(__file__).resolve().parents[1] / "datasets" / "sample"
PROXYSQL_TOKEN = "proxysql-test-token-s3cret"
PROXYSQL_K_MAX = 50


def corpus_ids(root: Path = SAMPLE) -> list[str]:
    with (root / "corpus.jsonl").open(encoding="utf-8") as f:
        return [json.loads(line)["_id"] for line in f if line.strip()]


def ranking(query: str, ids: list[str] | None = None) -> list[str]:
    """The ranking every seed server gives ``query``: the whole corpus, in an order fixed by a hash."""
    ids = corpus_ids() if ids is None else ids
    return sorted(ids, key=lambda d: hashlib.sha256(f"{query}\x00{d}".encode()).hexdigest())


def _score(rank: int) -> float:
    return round(1.0 - rank / 1000, 3)


# -- HTTP: Huginn (GET /api/search) and SingleStore KAG (POST /kag-search) ---------------------------------


def huginn_app(seen: list[dict[str, Any]]) -> Starlette:
    """``GET /api/search?q=&limit=&min_relevance=``: results with id, relevance, confidenceBand, snippet."""

    async def search(request: Request) -> JSONResponse:
        q, limit = request.query_params["q"], int(request.query_params.get("limit", "10"))
        floor = float(request.query_params.get("min_relevance", "0"))
        seen.append({"q": q, "limit": limit, "traceparent": request.headers.get("traceparent")})
        top = ranking(q)[:limit]
        kept = [{"id": d, "relevance": _score(i), "confidenceBand": "medium", "snippet": f"about {d}",
                 "matchedChunks": [{"relevance": _score(i)}]} for i, d in enumerate(top) if _score(i) >= floor]
        return JSONResponse({"results": kept, "bestScore": _score(0) if top else 0.0})

    return Starlette(routes=[Route("/api/search", search, methods=["GET"])])


def kag_app(seen: list[dict[str, Any]]) -> Starlette:
    """``POST /kag-search {query, top_k, debug}``: results with doc_id, content, the three scores, entities."""

    async def search(request: Request) -> JSONResponse:
        body = await request.json()
        seen.append({**body, "traceparent": request.headers.get("traceparent")})
        top = ranking(body["query"])[: int(body.get("top_k", 5))]
        results = [{"doc_id": d, "content": f"about {d}", "vector_score": _score(i), "text_score": _score(i),
                    "combined_score": _score(i), "entities": [], "relationships": []} for i, d in enumerate(top)]
        return JSONResponse({"results": results, "generated_response": "...", "execution_time": 0.01})

    return Starlette(routes=[Route("/kag-search", search, methods=["POST"])])


# -- MCP over streamable HTTP: HAWKI (query-search) and ProxySQL (rag.search_*) -------------------------------

Tool = Callable[[dict[str, Any]], dict[str, Any]]


def _mcp_server(name: str, tools: dict[str, Tool], seen: list[dict[str, Any]]) -> Server[Any]:
    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name=t, input_schema={"type": "object"}) for t in tools])

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = dict(params.arguments or {})
        seen.append({"tool": params.name, **args, "traceparent": (ctx.meta or {}).get("traceparent")})
        if params.name not in tools:
            return types.CallToolResult(content=[types.TextContent(text=f"unknown tool {params.name}")], is_error=True)
        payload = tools[params.name](args)
        return types.CallToolResult(content=[types.TextContent(text=json.dumps(payload))], structured_content=payload)

    return Server(name, on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def _mcp_app(server: Server[Any], path: str, token: str | None = None, json_response: bool = True,
             stateless: bool = True) -> Starlette:
    """``server`` at ``path``, answering JSON (or event streams), with no session (or one per client)."""
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings

    manager = StreamableHTTPSessionManager(server, json_response=json_response, stateless=stateless,
                                           security_settings=TransportSecuritySettings(
                                               enable_dns_rebinding_protection=False))
    inner = StreamableHTTPASGIApp(manager)

    class Guarded:  # an ASGI app (a class, so Starlette's Route passes the raw scope, not a Request)
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            headers = dict(scope.get("headers") or [])
            if token is not None and headers.get(b"authorization") != f"Bearer {token}".encode():
                await JSONResponse({"error": "unauthorized"}, status_code=401)(scope, receive, send)
                return
            await inner(scope, receive, send)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        async with manager.run():
            yield

    return Starlette(routes=[Route(path, endpoint=Guarded(), methods=["GET", "POST", "DELETE"])], lifespan=lifespan)


def hawki_app(seen: list[dict[str, Any]], path: str = "/mcp/hawki", json_response: bool = True,
              stateless: bool = True) -> Starlette:
    """MCP tool ``query-search {query, top_k 1-50, default 5}``: ``{results, kg, rewrite_terms}``; no ids, no
    scores: a chunk's page is its ``metadata.url``."""

    def query_search(args: dict[str, Any]) -> dict[str, Any]:
        if args["query"] == "crash please":
            raise RuntimeError("index offline")  # the handler raises: a JSON-RPC error, not a tool result
        top_k = int(args.get("top_k", 5))
        if not 1 <= top_k <= 50:
            raise ValueError("top_k must be in [1, 50]")
        results = [{"metadata": {"url": d, "title": d, "collection": "hawki"}, "content": f"about {d}"}
                   for d in ranking(args["query"])[:top_k]]
        relation = {"metadata": {"collection": "hawki"}, "component_type": "relation", "subject": "Entity A",
                    "relation": "connected_to", "object": "Entity B"}
        return {"results": results[:1] + [relation] + results[1:], "kg": [], "rewrite_terms": ["entity a"]}

    return _mcp_app(_mcp_server("hawki", {"query-search": query_search}, seen), path,
                    json_response=json_response, stateless=stateless)


def proxysql_app(seen: list[dict[str, Any]], path: str = "/mcp/rag") -> Starlette:
    """MCP tools ``rag.search_fts`` (k <= 50, offset), ``rag.search_hybrid`` behind a Bearer token at ``/mcp/rag``:
    ``{results: [{chunk_id, doc_id, score, title}], truncated, stats}``."""

    def search(args: dict[str, Any], offset: int) -> dict[str, Any]:
        k = int(args.get("k", 10))
        k = k if 1 <= k <= PROXYSQL_K_MAX else 10  # validate_k: out of bounds is the default
        ordered = ranking(args["query"])
        page = ordered[offset: offset + k]
        results = [{"chunk_id": f"{d}#0", "doc_id": d, "score": _score(offset + i), "title": d}
                   for i, d in enumerate(page)]
        return {"results": results, "truncated": offset + k < len(ordered), "stats": {"k_requested": k}}

    tools: dict[str, Tool] = {"rag.search_fts": lambda a: search(a, int(a.get("offset", 0))),
                              "rag.search_hybrid": lambda a: search(a, 0)}
    return _mcp_app(_mcp_server("proxysql", tools, seen), path, token=PROXYSQL_TOKEN)
