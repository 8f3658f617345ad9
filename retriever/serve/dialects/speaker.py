"""What a dialect is given: the service as one source, traced HTTP answers, and MCP endpoints of its own tools.

A dialect translates; the :class:`Speaker` does everything else the same way
for all of them: a search runs through ``Service.search`` (validated, bounded,
timed, traced with the dialect as ``searchtrace.source``), an HTTP answer is the
server span of ``http._traced``, and a tool call opens the same ``tools/call``
server span as our own MCP tools, its failure a tool error.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from fastapi import Request
from fastapi.responses import Response
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from searchtrace import __version__
from searchtrace.errors import SearchFailed, SearchtraceError, Unauthorized, ValidationError, error_object
from searchtrace.guards import ASGIApp, Receive, Scope, Send, refuse
from searchtrace.retriever.request import MAX_TOP_K
from searchtrace.retriever.response import RelationHit, Result, SearchResponse
from searchtrace.retriever.serve import render
from searchtrace.retriever.serve.service import Service, Variant
from searchtrace.traces import attributes as attrs
from searchtrace.traces import vocabulary as v

__all__ = ["Answer", "Passages", "Speaker", "Tool", "ToolAnswer", "listing", "no_http"]


@dataclass(frozen=True)
class ToolAnswer:
    """A tool's answer: its structured content (None: text only) and its text content."""

    structured: dict[str, Any] | None
    text: str


ToolHandler = Callable[[dict[str, Any]], Awaitable[ToolAnswer]]


@dataclass(frozen=True)
class Tool:
    """One MCP tool of a dialect: its description, input schema and handler (arguments in, answer out);
    ``refuse``: its error answer in the dialect's own error schema (None: our error object)."""

    description: str
    input_schema: dict[str, Any]
    handler: ToolHandler
    refuse: Callable[[SearchtraceError], ToolAnswer] | None = None


Answer = Callable[[Service, Request, str, Callable[[], Awaitable[Any]], v.Source], Awaitable[Response]]
"""Runs a route's work under its server span and answers its JSON or its error (``http.traced``)."""


@dataclass(frozen=True)
class Passages:
    """A search answered as a document system sees it: ``passages`` the first ``n`` passages, ``facts`` the
    relation hits shown beside them, ``response`` the whole response."""

    response: SearchResponse
    passages: tuple[Result, ...]
    facts: tuple[RelationHit, ...]


@dataclass
class Speaker:
    """The service as one dialect speaks to it.

    Attributes:
        service: the open datasets and the one way a search runs.
        source: what its traces say called (the dialect's :class:`~searchtrace.traces.vocabulary.Source`).
        answer: answers an HTTP route under its server span (``http.traced``, given by the app).
        managers: the MCP session managers its endpoints need running (the app's lifespan runs them).
        own_auth: paths guarded by a token of their own (the server's API key does not apply there).
    """

    service: Service
    source: v.Source
    answer: Answer
    managers: list[Any] = field(default_factory=list)
    own_auth: set[str] = field(default_factory=set)
    endpoints: dict[str, Mapping[str, Tool]] = field(default_factory=dict)
    """Each MCP endpoint's path and its tools (what :meth:`call` takes)."""

    async def search(self, request: Mapping[str, Any], variant: Variant | None = None) -> SearchResponse:
        """Our search (``request``: our request's fields, plus ``dataset`` / ``fusion``), traced as this dialect."""
        return await self.service.search(request, variant, self.source)

    async def passages(self, request: Mapping[str, Any], n: int, variant: Variant | None = None, *,
                       field: str = "top_k") -> Passages:
        """The first ``n`` passages, as a system without relation hits answers them (``field``: the dialect's
        name for ``n``, in a refusal).

        The search shows no relation hits (``Service.search(facts=False)``; the facts behind the passages stay
        in ``kg``): were facts to take ``top_k`` places, asking for more places would raise ``candidates``
        with ``top_k``, and more candidates reorder the ranking (fused scores are normalised over them), so
        the ``n`` passages would not be the in-process eval's first ``n``.
        """
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_TOP_K:
            raise ValidationError(f"{field} must be an integer between 1 and {MAX_TOP_K}, got {n!r:.40}",
                                  field=field)
        response = await self.service.search({**request, "top_k": n}, variant, self.source, facts=False)
        return Passages(response, response.chunks[:n], response.relations)

    async def documents(self, ids: list[str], chunks: bool, dataset: str | None = None) -> list[dict[str, Any]]:
        """Documents (or chunks) by id, bounded as ``GET /v1/docs`` is."""
        return await self.service.documents(ids, dataset, chunks=chunks)

    async def http(self, request: Request, route: str, work: Callable[[], Awaitable[Any]]) -> Response:
        """``work()``'s JSON under the request's server span (the dialect as the source), or the error object."""
        return await self.answer(self.service, request, route, work, self.source)

    def mcp(self, app: Any, path: str, name: str, tools: Mapping[str, Tool], token: str | None = None) -> None:
        """Mount an MCP endpoint (streamable HTTP, stateless) at ``path`` serving ``tools``; ``token``: the Bearer
        token it requires instead of the server's API key. ``app`` None (over stdio): the tools are only
        recorded in :attr:`endpoints`, for the stdio server to list beside ours."""
        if app is None:
            self.endpoints[path] = tools
            return
        from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
        from mcp.server.transport_security import TransportSecuritySettings
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
        from starlette.routing import Route

        from searchtrace.retriever.serve.config import MAX_BODY_BYTES
        from searchtrace.retriever.serve.limits import TransportRefusals
        from searchtrace.retriever.serve.sessions import McpSessions

        manager = StreamableHTTPSessionManager(self._server(name, tools), json_response=True, stateless=True,
                                               security_settings=TransportSecuritySettings(
                                                   enable_dns_rebinding_protection=False),
                                               max_request_body_size=MAX_BODY_BYTES)
        self.managers.append(manager)
        self.endpoints[path] = tools
        inner: ASGIApp = TransportRefusals(StreamableHTTPASGIApp(manager), lambda scope, status, exc: (
            self.service.refused(f"{scope['method']} {scope['path']}", self.source, status, exc)))
        endpoint: ASGIApp = McpSessions(inner, HANDSHAKE_PROTOCOL_VERSIONS)
        if token is not None:
            endpoint = TokenGuard(endpoint, token, name)
            self.own_auth.add(path)
        app.router.routes.append(Route(path, endpoint=endpoint, include_in_schema=False))

    def _server(self, name: str, tools: Mapping[str, Tool]) -> Server[Any]:
        listed = listing(tools)

        async def on_list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
                                ) -> types.ListToolsResult:
            return types.ListToolsResult(tools=listed)

        async def on_call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
                               ) -> types.CallToolResult:
            from searchtrace.retriever.serve.mcp_tools import call_session

            return await self.call(tools, params.name, params.arguments, ctx.meta, call_session(ctx, None))

        server: Server[Any] = Server(name, version=__version__, on_list_tools=on_list_tools,
                                     on_call_tool=on_call_tool)
        server.middleware = []  # our server span (with the dialect as the source) replaces the SDK's
        return server

    async def call(self, tools: Mapping[str, Tool], name: str, arguments: dict[str, Any] | None,
                   meta: Mapping[str, Any] | None, session: str | None = None) -> types.CallToolResult:
        """One tool call under its server span; a failure is a tool error carrying the error object."""
        from searchtrace.errors import NotFoundError
        from searchtrace.retriever.serve.mcp_tools import parent_context

        attributes = {v.MCP_METHOD_NAME: "tools/call", v.GEN_AI_TOOL_NAME: name, **attrs.session(session)}
        trace_id = ""
        try:
            with self.service.server_span(f"tools/call {name}", self.source, parent_context(meta),
                                          attributes) as span:
                trace_id = format(span.get_span_context().trace_id, "032x")
                tool = tools.get(name)
                if tool is None:
                    raise NotFoundError(f"unknown tool {name!r}; tools: {', '.join(tools)}", field="name")
                answer = await tool.handler(dict(arguments or {}))
        except SearchtraceError as exc:
            await self.service.acknowledge()
            refuse = tools[name].refuse if name in tools else None
            if refuse is not None:  # the dialect's own error schema
                refused = refuse(exc)
                return types.CallToolResult(content=[types.TextContent(text=refused.text)],
                                            structured_content=refused.structured, is_error=True)
            text = render.error_text(exc) + (f"\ntrace {trace_id}" if trace_id else "")
            return types.CallToolResult(content=[types.TextContent(text=text)],
                                        structured_content=error_object(exc), is_error=True)
        await self.service.acknowledge()  # the trace is stored before the answer leaves
        return types.CallToolResult(content=[types.TextContent(text=answer.text)],
                                    structured_content=answer.structured)


def listing(tools: Mapping[str, Tool]) -> list[types.Tool]:
    """The tools as ``tools/list`` shows them (read-only, closed world)."""
    return [types.Tool(name=t, description=tool.description, input_schema=tool.input_schema,
                       annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False))
            for t, tool in tools.items()]


async def no_http(service: Service, request: Request, route: str, work: Callable[[], Awaitable[Any]],
                  source: v.Source) -> Response:
    """A stdio speaker's :attr:`Speaker.answer`: over stdio no route is mounted, so none is answered."""
    raise SearchFailed(f"{route}: no HTTP route is served over MCP stdio")


def json_answer(payload: dict[str, Any]) -> ToolAnswer:
    """A structured answer whose text is the same JSON (what an MCP client without structured content reads)."""
    return ToolAnswer(payload, json.dumps(payload))


class TokenGuard:
    """Requires ``Authorization: Bearer <token>`` (constant-time compared) on one dialect's endpoint."""

    def __init__(self, app: ASGIApp, token: str, name: str) -> None:
        self.app, self.token, self.name = app, token.encode(), name

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        scheme, _, token = given.partition(b" ")
        if scope["type"] == "http" and scheme.lower() == b"bearer" and hmac.compare_digest(token.strip(), self.token):
            return await self.app(scope, receive, send)
        await refuse(scope, send, 401, Unauthorized(f"missing or wrong token: {self.name} takes "
                                                    "'Authorization: Bearer <its token>'"),
                     headers=[(b"www-authenticate", f'Bearer realm="{self.name}"'.encode())])
