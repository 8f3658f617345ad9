"""The MCP server: six tools over the service, with the official ``mcp`` SDK's low-level Server.

Each tool answers twice: structured content (the HTTP API's JSON, unchanged) and
text an LLM reads well (:mod:`.render`). A failure is a tool error
(``isError``) whose structured content is the error object. Every call is one
trace: a server span ``tools/call <tool>`` (joined to the caller's trace when
the request's ``_meta`` carries a W3C ``traceparent``) over the search span.
Over stdio, a dialect of ``dialects.STDIO`` lists its tools beside these (:class:`MoreTools`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from opentelemetry import propagate
from opentelemetry.context import Context

from searchtrace import __version__
from searchtrace.errors import SearchtraceError, ValidationError, error_object
from searchtrace.retriever.response import SearchResponse
from searchtrace.retriever.serve import render
from searchtrace.retriever.serve.schemas import TRACE_ID_FIELD, ids_fields, ids_schema, search_schema
from searchtrace.retriever.serve.service import Service, Variant
from searchtrace.retriever.serve.sessions import session_id
from searchtrace.traces import attributes as attrs
from searchtrace.traces import vocabulary as v

TOOL_DESCRIPTIONS = {
    "search": "Hybrid search (dense + BM25 + knowledge graph) over a document collection. Returns the best "
              "passages with a relevance percentage and band, related knowledge-graph facts, and retry hints "
              "when nothing matches confidently.",
    "search_keyword": "BM25 keyword search only (exact terms, names, codes).",
    "search_vector": "Dense (semantic) search only.",
    "get_chunks": "Fetch passages (chunks) by id, as search results are shaped. Pass the search's traceId "
                  "when the ids come from a search's results.",
    "get_docs": "Fetch whole documents by id: title, text and metadata. Pass the search's traceId when the ids "
                "come from a search's results.",
    "stats": ("Documents, triples, model, index key and build time per dataset; the most results a search "
              "answers (maxTopK); searches served; latency p50/p95."),
}

Handler = Callable[[Service, dict[str, Any]], Awaitable[SearchResponse | dict[str, Any]]]


async def _search(service: Service, args: dict[str, Any], variant: Variant | None) -> SearchResponse:
    return await service.search(args, variant, v.Source.MCP)


async def _documents(service: Service, args: dict[str, Any], chunks: bool) -> dict[str, Any]:
    allowed = ids_fields()
    unknown = sorted(set(args) - set(allowed))
    if unknown:
        raise ValidationError(f"{unknown[0]}: unknown field; allowed fields: {', '.join(allowed)}", field=unknown[0])
    ids = args.get("ids")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ValidationError("ids must be a list of document id strings", field="ids")
    found = await service.documents(ids, args.get("dataset"), chunks=chunks, follows=args.get(TRACE_ID_FIELD))
    return {"chunks" if chunks else "documents": found}


async def _stats(service: Service, args: dict[str, Any]) -> dict[str, Any]:
    if args:
        name = sorted(args)[0]
        raise ValidationError(f"unknown field {name}; stats takes no arguments", field=name)
    return await service.run(service.stats)


HANDLERS: dict[str, Handler] = {
    "search": lambda s, a: _search(s, a, None),
    "search_keyword": lambda s, a: _search(s, a, Variant.KEYWORD),
    "search_vector": lambda s, a: _search(s, a, Variant.VECTOR),
    "get_chunks": lambda s, a: _documents(s, a, True),
    "get_docs": lambda s, a: _documents(s, a, False),
    "stats": _stats,
}


def tools(service: Service) -> list[types.Tool]:
    """The tools with input schemas carrying the limits."""
    names = list(service.dataset_paths)
    schemas = {"search": search_schema(names, with_fusion=True, fusion_default=service.config.fusion.method),
               "search_keyword": search_schema(names, with_fusion=False),
               "search_vector": search_schema(names, with_fusion=False),
               "get_chunks": ids_schema(names), "get_docs": ids_schema(names),
               "stats": {"type": "object", "properties": {}, "additionalProperties": False}}
    read_only = types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    return [types.Tool(name=name, description=TOOL_DESCRIPTIONS[name], input_schema=schemas[name],
                       annotations=read_only) for name in HANDLERS]


def _text(name: str, payload: Mapping[str, Any]) -> str:
    if name in ("get_docs", "get_chunks"):
        return render.documents_text(payload.get("documents") or payload.get("chunks") or [])
    import json

    return json.dumps(payload, indent=2)


def parent_context(meta: Mapping[str, Any] | None) -> Context | None:
    """The caller's trace context from the request's ``_meta`` (``traceparent``), if it carries one."""
    if not meta or "traceparent" not in meta:
        return None
    return propagate.extract({k: x for k, x in meta.items() if isinstance(x, str)})


async def call_tool(service: Service, name: str, arguments: dict[str, Any] | None,
                    meta: Mapping[str, Any] | None, session: str | None = None) -> types.CallToolResult:
    """One tool call under its server span (with its MCP session, if it has one); errors come back as tool
    errors carrying the error object."""
    attributes = {v.MCP_METHOD_NAME: "tools/call", v.GEN_AI_TOOL_NAME: name, **attrs.session(session)}
    trace_id = ""
    try:
        with service.server_span(f"tools/call {name}", v.Source.MCP, parent_context(meta), attributes) as span:
            trace_id = format(span.get_span_context().trace_id, "032x")
            handler = HANDLERS.get(name)
            if handler is None:
                from searchtrace.errors import NotFoundError

                raise NotFoundError(f"unknown tool {name!r}; tools: {', '.join(HANDLERS)}", field="name")
            payload = await handler(service, dict(arguments or {}))
    except SearchtraceError as exc:
        await service.acknowledge()
        text = render.error_text(exc) + (f"\ntrace {trace_id}" if trace_id else "")
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=error_object(exc),
                                    is_error=True)
    await service.acknowledge()  # the trace is stored before the answer leaves
    if isinstance(payload, SearchResponse):
        return types.CallToolResult(content=[types.TextContent(text=render.response_text(payload))],
                                    structured_content=dict(payload.to_json()))
    return types.CallToolResult(content=[types.TextContent(text=_text(name, payload))], structured_content=payload)


def call_session(ctx: ServerRequestContext[Any], stdio: str | None) -> str | None:
    """The call's MCP session: over HTTP the ``Mcp-Session-Id`` its request carries (see ``sessions``), over
    stdio the one id of this process's pipe."""
    headers = getattr(ctx.request, "headers", None)
    if headers is None:
        return stdio
    return session_id(headers)


class MoreTools(Protocol):
    """Tools served beside ours over stdio: the dialects' (``dialects.StdioDialects``), each call traced by its
    own dialect."""

    @property
    def tools(self) -> Sequence[types.Tool]: ...

    async def call(self, name: str, arguments: dict[str, Any] | None, meta: Mapping[str, Any] | None,
                   session: str | None) -> types.CallToolResult: ...


def build_server(service: Service, stdio_session: str | None = None, more: MoreTools | None = None
                 ) -> Server[Any]:
    """The MCP server (for stdio, or the streamable HTTP transport mounted at ``/mcp``).

    Args:
        stdio_session: the session id of every call that comes without an HTTP request (stdio: one client).
        more: over stdio, other tools listed and answered beside ours (the served dialects').
    """
    theirs = {t.name for t in more.tools} if more is not None else set()
    listed = list(more.tools) if more is not None else []

    async def on_list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
                            ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools(service) + listed)

    async def on_call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
                           ) -> types.CallToolResult:
        session = call_session(ctx, stdio_session)
        if more is not None and params.name in theirs:
            return await more.call(params.name, params.arguments, ctx.meta, session)
        return await call_tool(service, params.name, params.arguments, ctx.meta, session)

    server: Server[Any] = Server("searchtrace", version=__version__,
                                 instructions="Search the served document collections; every call is traced.",
                                 on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    server.middleware = []  # our own server span (with the source) replaces the SDK's
    return server
