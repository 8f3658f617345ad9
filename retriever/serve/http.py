"""The HTTP API (FastAPI): search endpoints, documents, stats, probes, and MCP mounted at ``/mcp``.

Every search (and document fetch) is one trace: a SERVER span named after the
route, joined to the caller's trace when a W3C ``traceparent`` header comes
with the request, parenting the ``search`` span. Errors are always the error
object with its status (400, 401, 404, 413, 429 + Retry-After, 503, 504),
never a traceback.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from http import HTTPStatus
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from opentelemetry import propagate
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route

from searchtrace import __version__
from searchtrace.errors import (
    ERROR_SCHEMA,
    ErrorCode,
    NotFoundError,
    SearchFailed,
    SearchtraceError,
    ValidationError,
    error_object,
)
from searchtrace.guards import BearerAuth, HostCheck
from searchtrace.retriever.response import response_schema
from searchtrace.retriever.serve.config import MAX_BODY_BYTES, MAX_IDS, RETRY_AFTER_S
from searchtrace.retriever.serve.dialects import Dialect
from searchtrace.retriever.serve.limits import OPEN_PATHS, BodyLimit, TransportRefusals
from searchtrace.retriever.serve.schemas import TRACE_ID_FIELD, TRACE_ID_SCHEMA, search_schema
from searchtrace.retriever.serve.service import STATUS, Service, Variant
from searchtrace.traces import TRACES_PATH, receiver_for_store
from searchtrace.traces import vocabulary as v

log = logging.getLogger(__name__)


def json_response(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """JSON by orjson (numpy values included)."""
    return Response(orjson.dumps(payload, option=orjson.OPT_SERIALIZE_NUMPY), status_code=status,
                    media_type="application/json", headers=headers)


def error_response(exc: SearchtraceError, trace_id: str = "") -> Response:
    """The error object with its status (and Retry-After on 429)."""
    headers = {"retry-after": str(RETRY_AFTER_S)} if exc.code is ErrorCode.OVERLOADED else {}
    if trace_id:
        headers["x-trace-id"] = trace_id
    return json_response(error_object(exc), STATUS.get(exc.code, 500), headers)


async def _traced(service: Service, request: Request, route: str, work: Any) -> Response:
    """Run ``work()`` (a coroutine factory) under the request's server span; answer its JSON or its error."""
    parent = propagate.extract(dict(request.headers))
    attributes = {v.HTTP_REQUEST_METHOD: request.method, v.HTTP_ROUTE: route}
    trace_id = ""
    try:
        with service.server_span(f"{request.method} {route}", v.Source.HTTP, parent, attributes) as span:
            trace_id = format(span.get_span_context().trace_id, "032x")
            try:
                payload = await work()
            except SearchtraceError as exc:
                span.set_attribute(v.HTTP_RESPONSE_STATUS_CODE, STATUS.get(exc.code, 500))
                raise
            span.set_attribute(v.HTTP_RESPONSE_STATUS_CODE, 200)
    except SearchtraceError as exc:
        await service.acknowledge()
        return error_response(exc, trace_id)
    await service.acknowledge()  # the trace is stored before the answer leaves
    return json_response(payload, headers={"x-trace-id": trace_id})


def _body(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ValidationError(f"request body is not valid JSON: {exc}") from None


def _ids(request: Request) -> list[str]:
    """``ids=a,b`` or ``ids=a&ids=b``; spaces and tabs around an id are not part of it."""
    return [i.strip(" \t") for value in request.query_params.getlist("ids") for i in value.split(",")
            if i.strip(" \t")]


def _follows(request: Request) -> str | None:
    """The ``traceId`` a fetch names (the search it follows), if any; checked by ``Service.documents``."""
    given = request.query_params.getlist(TRACE_ID_FIELD)
    if len(given) > 1:
        raise ValidationError(f"{TRACE_ID_FIELD}: give one (the search's), got {len(given)}", field=TRACE_ID_FIELD)
    return given[0] if given else None


#: The error statuses each kind of route can answer (every one with the error object), beside 200.
SEARCH_ERRORS = (400, 401, 404, 413, 421, 429, 500, 503, 504)
DOCUMENT_ERRORS = SEARCH_ERRORS
PLAIN_ERRORS = (401, 413, 421, 500)


def _responses(ok: dict[str, Any], errors: tuple[int, ...]) -> dict[str, Any]:
    """An operation's ``responses``: 200 with ``ok`` and each error status with the error object's schema."""
    out: dict[str, Any] = {"200": {"description": "OK", "content": {"application/json": {"schema": ok}}}}
    for status in errors:
        out[str(status)] = {"description": HTTPStatus(status).phrase,
                            "content": {"application/json": {"schema": ERROR_SCHEMA}}}
    return out


def _documents_schema(chunks: bool) -> dict[str, Any]:
    metadata = {"type": "object"}
    item = ({"type": "object", "required": ["id", "content", "component_type", "metadata"],
             "properties": {"id": {"type": "string"}, "content": {"type": "string"},
                            "component_type": {"type": "string", "enum": ["chunk"]}, "metadata": metadata}}
            if chunks else
            {"type": "object", "required": ["id", "title", "text", "metadata"],
             "properties": {"id": {"type": "string"}, "title": {"type": "string"}, "text": {"type": "string"},
                            "metadata": metadata}})
    key = "chunks" if chunks else "documents"
    return {"type": "object", "required": [key], "properties": {key: {"type": "array", "items": item}}}


def create_app(service: Service, *, mcp: bool = True, dialect: Dialect | None = None) -> FastAPI:
    """The ASGI app: routes, error handlers, body limit, API key, CORS if configured, MCP at ``/mcp`` (with a
    dialect's tools beside ours, when given one)."""
    manager = None
    if mcp:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
        from mcp.server.transport_security import TransportSecuritySettings

        from searchtrace.retriever.serve.mcp_tools import build_server

        # Host and Origin are checked for every route, /mcp included, by HostCheck (searchtrace.guards)
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        manager = StreamableHTTPSessionManager(build_server(service, dialect=dialect), json_response=True, stateless=True,
                                               security_settings=security, max_request_body_size=MAX_BODY_BYTES)

    # POST /v1/traces: the OTLP receiver of `searchtrace collect`, writing to this server's trace store
    receiver = (receiver_for_store(service.store, service.config.home, close_store=False)
                if service.store is not None else None)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            if manager is None:
                yield
                return
            async with manager.run():
                yield
        finally:
            if receiver is not None:  # what the receiver acknowledged-pending is written before the store closes
                await asyncio.to_thread(receiver.writer.close)

    from fastapi_offline import FastAPIOffline

    # /docs and /redoc from the Swagger UI and ReDoc files fastapi-offline installs: no page loads a CDN
    app = FastAPIOffline(title="searchtrace", version=__version__, lifespan=lifespan,
                         description="Hybrid graph-aware search; every call is a trace.")
    names = list(service.dataset_paths)

    def body_doc(with_fusion: bool) -> dict[str, Any]:
        return {"requestBody": {"required": True, "content": {"application/json": {
            "schema": search_schema(names, with_fusion=with_fusion,
                                    fusion_default=service.config.fusion.method)}}},
                "responses": _responses(response_schema(), SEARCH_ERRORS)}

    def ids_doc(chunks: bool) -> dict[str, Any]:
        ids = {"type": "array", "minItems": 1, "maxItems": MAX_IDS,
               "items": {"type": "string", "pattern": "[^, \t]"}}  # a comma separates ids too
        return {"parameters": [
                    {"name": "ids", "in": "query", "required": True, "style": "form", "explode": True,
                     "schema": ids, "description": f"document ids (ids=a,b or ids=a&ids=b; at most {MAX_IDS})"},
                    {"name": "dataset", "in": "query", "required": False,
                     "schema": {"type": "string", "enum": names}, "description": f"default {names[0]}"},
                    {"name": TRACE_ID_FIELD, "in": "query", "required": False, "schema": dict(TRACE_ID_SCHEMA),
                     "description": TRACE_ID_SCHEMA["description"]}],
                "responses": _responses(_documents_schema(chunks), DOCUMENT_ERRORS)}

    def plain_doc(errors: tuple[int, ...] = PLAIN_ERRORS) -> dict[str, Any]:
        return {"responses": _responses({"type": "object"}, errors)}

    async def search(request: Request, variant: Variant | None, route: str) -> Response:
        async def work() -> dict:
            return dict((await service.search(_body(await request.body()), variant, v.Source.HTTP)).to_json())
        return await _traced(service, request, route, work)

    @app.post("/v1/search", openapi_extra=body_doc(True), summary="Hybrid search (the full request)")
    async def search_hybrid(request: Request) -> Response:
        return await search(request, None, "/v1/search")

    @app.post("/v1/search/keyword", openapi_extra=body_doc(False), summary="BM25 only")
    async def search_keyword(request: Request) -> Response:
        return await search(request, Variant.KEYWORD, "/v1/search/keyword")

    @app.post("/v1/search/vector", openapi_extra=body_doc(False), summary="Dense only")
    async def search_vector(request: Request) -> Response:
        return await search(request, Variant.VECTOR, "/v1/search/vector")

    @app.get("/v1/docs", summary="Documents by id", openapi_extra=ids_doc(False))
    async def docs(request: Request) -> Response:
        async def work() -> dict:
            dataset = request.query_params.get("dataset")
            return {"documents": await service.documents(_ids(request), dataset, chunks=False,
                                                         follows=_follows(request))}
        return await _traced(service, request, "/v1/docs", work)

    @app.get("/v1/chunks", summary="Chunks by id, shaped as results", openapi_extra=ids_doc(True))
    async def chunks(request: Request) -> Response:
        async def work() -> dict:
            dataset = request.query_params.get("dataset")
            return {"chunks": await service.documents(_ids(request), dataset, chunks=True,
                                                      follows=_follows(request))}
        return await _traced(service, request, "/v1/chunks", work)

    @app.get("/v1/stats", summary="Datasets, maxTopK, searches served, latency p50/p95 from the trace store",
             openapi_extra=plain_doc())
    async def stats() -> Response:
        return json_response(await asyncio.to_thread(service.stats))

    @app.get("/healthz", summary="Alive", openapi_extra=plain_doc((413, 500)))
    async def healthz() -> Response:
        return json_response({"status": "ok"})

    @app.get("/readyz", summary="Indexes open and model loaded", openapi_extra=plain_doc((413, 500, 503)))
    async def readyz() -> Response:
        state = service.readiness()
        return json_response(state, 200 if state["ready"] else 503)

    if manager is not None:
        from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

        from searchtrace.retriever.serve.sessions import McpSessions

        mcp_app = TransportRefusals(StreamableHTTPASGIApp(manager), lambda scope, status, exc: service.refused(
            f"{scope['method']} {scope['path']}", v.Source.MCP, status, exc))
        app.router.routes.append(Route("/mcp", endpoint=McpSessions(mcp_app, HANDSHAKE_PROTOCOL_VERSIONS),
                                       include_in_schema=False))

    if receiver is not None:
        app.router.routes.append(Route(TRACES_PATH, endpoint=receiver, include_in_schema=False))
    _error_handlers(app, service)
    if service.serve.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=list(service.serve.cors_origins),
                           allow_methods=["GET", "POST", "DELETE"], expose_headers=["mcp-session-id"],
                           allow_headers=["authorization", "content-type", "traceparent", "mcp-session-id"])
    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES, own_limits=frozenset({TRACES_PATH}),  # the receiver's own
                       refused=lambda scope, status, exc: service.refused(
        f"{scope['method']} {scope['path']}", v.Source.MCP if scope["path"] == "/mcp" else v.Source.HTTP, status, exc))
    if service.serve.api_key:
        # nothing is read unauthorized
        app.add_middleware(BearerAuth, api_key=service.serve.api_key, open_paths=OPEN_PATHS)
    app.add_middleware(HostCheck, allowed_hosts=(service.serve.host, *service.serve.allowed_hosts),
                       cors_origins=service.serve.cors_origins,
                       open_paths=OPEN_PATHS)  # outermost: a rebinding page reads nothing
    return app


def _error_handlers(app: FastAPI, service: Service) -> None:
    async def answer(request: Request, status: int, error: SearchtraceError, headers: dict[str, str]) -> Response:
        trace_id = await service.refused(f"{request.method} {request.url.path}", v.Source.HTTP, status, error)
        return json_response(error_object(error), status, {**headers, "x-trace-id": trace_id})

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        kind = {404: NotFoundError, 405: ValidationError}.get(exc.status_code, SearchFailed)
        message = f"no route {request.method} {request.url.path}" if exc.status_code in (404, 405) else str(exc.detail)
        return await answer(request, exc.status_code, kind(message), dict(exc.headers or {}))  # 405: Allow

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        first = exc.errors()[0] if exc.errors() else {}
        field = ".".join(str(p) for p in first.get("loc", ())[1:]) or None
        return await answer(request, 400, ValidationError(f"{field or 'request'}: {first.get('msg', 'invalid')}",
                                                          field=field), {})

    @app.exception_handler(Exception)
    async def failed(request: Request, exc: Exception) -> Response:
        log.exception("request failed: %s %s", request.method, request.url.path)
        return await answer(request, 500, SearchFailed("internal error (logged by the server)"), {})
