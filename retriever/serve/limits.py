"""Pure ASGI guards in front of every route: the Host check, the bearer token, then the body size; and the
MCP transport's own refusals rewritten.

Each answers with the error object itself, before any route (or the MCP
transport) sees the request. A refusal past the API key (a body too large, a
request the MCP transport refuses) is a trace too, whose id the ``x-trace-id``
header carries, as every other error answer's does; a request refused for its
Host or its missing key leaves no trace, so an unauthenticated caller cannot
write to the trace store.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from searchtrace.errors import (
    PayloadTooLarge,
    SearchFailed,
    SearchtraceError,
    Unauthorized,
    ValidationError,
    error_object,
)
from searchtrace.retriever.serve.config import is_loopback

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

OPEN_PATHS = frozenset({"/healthz", "/readyz"})
"""Paths answered without the API key (a load balancer's probes)."""


Refused = Callable[[Scope, int, SearchtraceError], Awaitable[str]]
"""Records a refused request as a trace (its server span, with the error) and returns the trace id."""


async def send_error(send: Send, status: int, exc: SearchtraceError,
                     headers: list[tuple[bytes, bytes]] | None = None, trace_id: str = "") -> None:
    """Answer the error object of ``exc`` with ``status`` (and ``x-trace-id`` when there is a trace)."""
    body = json.dumps(error_object(exc)).encode()
    extra = [(b"x-trace-id", trace_id.encode())] if trace_id else []
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *(headers or []), *extra]})
    await send({"type": "http.response.body", "body": body})


class BearerAuth:
    """Requires ``Authorization: Bearer <key>`` (compared in constant time) on every path but the probes."""

    def __init__(self, app: ASGIApp, api_key: str) -> None:
        self.app = app
        self.key = api_key.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            return await self.app(scope, receive, send)
        given = dict(scope["headers"]).get(b"authorization", b"")
        scheme, _, token = given.partition(b" ")
        if scheme.lower() == b"bearer" and hmac.compare_digest(token.strip(), self.key):
            return await self.app(scope, receive, send)
        await send_error(send, 401,
                         Unauthorized("missing or wrong API key: send 'Authorization: Bearer <SEARCHTRACE_API_KEY>'"),
                         headers=[(b"www-authenticate", b'Bearer realm="searchtrace"')])


class BodyLimit:
    """Refuses a request body over ``limit`` bytes with 413, whether announced (Content-Length) or streamed.

    The body is read here, up to the limit, and replayed to the app in one message.
    """

    def __init__(self, app: ASGIApp, limit: int, refused: Refused | None = None) -> None:
        self.app = app
        self.limit = limit
        self.refused = refused

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # every method: a GET's body is read, and bounded, too
            return await self.app(scope, receive, send)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            return await self._too_large(scope, send, int(declared))
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                return await self._too_large(scope, send, size)
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, scope: Scope, send: Send, size: int) -> None:
        exc = PayloadTooLarge(f"request body is {size:,} bytes or more; the maximum is {self.limit:,}")
        await send_error(send, 413, exc, trace_id=await self.refused(scope, 413, exc) if self.refused else "")


class TransportRefusals:
    """The MCP transport's own refusals (a wrong Accept or Content-Type, unparseable JSON, a method it does not
    take) answered as every route answers an error: the error object, ``x-trace-id``, ``Allow`` on 405.

    The transport answers them in JSON-RPC's envelope or in plain text; its clients read only the status
    (the MCP SDK raises on any error status), and tool errors stay tool results. In stateless mode there are
    no server-sent streams, so only POST is taken (a GET would hold its connection open forever).
    """

    def __init__(self, app: ASGIApp, refused: Refused) -> None:
        self.app = app
        self.refused = refused

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if scope["method"] != "POST":
            exc = ValidationError(f"no route {scope['method']} {scope['path']}: the MCP endpoint takes POST")
            return await send_error(send, 405, exc, [(b"allow", b"POST")], await self.refused(scope, 405, exc))
        held: Message | None = None
        body = b""

        async def intercept(message: Message) -> None:
            nonlocal held, body
            if message["type"] == "http.response.start" and message["status"] >= 400:
                held = message
            elif held is None:
                await send(message)
            elif message["type"] == "http.response.body":
                body += message.get("body", b"")
                if not message.get("more_body"):
                    await self._rewrite(scope, send, held["status"], body)

        await self.app(scope, receive, intercept)

    async def _rewrite(self, scope: Scope, send: Send, status: int, body: bytes) -> None:
        text = body.decode("utf-8", "replace").strip()
        try:
            envelope = json.loads(text)  # JSON-RPC's: {"jsonrpc", "id", "error": {"code": int, "message"}}
        except ValueError:
            envelope = None
        rpc_error = envelope.get("error") if isinstance(envelope, dict) else None
        message = rpc_error.get("message") if isinstance(rpc_error, dict) else None
        if isinstance(message, str):
            text = message
        kind = SearchFailed if status >= 500 else ValidationError
        exc = kind(f"the MCP transport refused the request: {text or status}")
        await send_error(send, status, exc, trace_id=await self.refused(scope, status, exc))


def host_name(value: str) -> str:
    """The name in a ``Host`` header or an origin's authority, without its port (``[::1]:8765`` -> ``::1``)."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def origin_name(origin: str) -> str | None:
    """The host of an ``Origin`` header (``http://localhost:8501`` -> ``localhost``); None for ``null``."""
    scheme, sep, rest = origin.strip().partition("://")
    return host_name(rest.split("/", 1)[0]) if sep and scheme else None


class HostCheck:
    """Answers 421 to a request whose ``Host`` (or ``Origin``) is not this server's, on every route.

    A page on a DNS-rebinding domain reaches a loopback server with its own
    name in ``Host``: only the loopback names (with or without a port), the
    address the server binds and ``--allowed-hosts`` are this server's. An
    ``Origin``, when a browser sends one, must name one of those too, or be one
    of ``--cors-origins``. The probes answer whatever the name.
    """

    def __init__(self, app: ASGIApp, allowed_hosts: tuple[str, ...], cors_origins: tuple[str, ...] = ()) -> None:
        self.app = app
        self.hosts = frozenset(host_name(h) for h in allowed_hosts)
        self.origins = frozenset(o.rstrip("/").lower() for o in cors_origins)

    def ours(self, name: str | None) -> bool:
        return name is not None and (is_loopback(name) or name in self.hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        host = headers.get(b"host", b"").decode("latin-1")
        if not self.ours(host_name(host)):
            return await send_error(send, 421, ValidationError(
                f"Host {host!r} is not this server's: it answers the loopback names, the address it binds "
                "and --allowed-hosts", field="Host"))
        origin = headers.get(b"origin", b"").decode("latin-1")
        if origin and origin.rstrip("/").lower() not in self.origins and not self.ours(origin_name(origin)):
            return await send_error(send, 421, ValidationError(
                f"Origin {origin!r} is not this server's, nor one of --cors-origins", field="Origin"))
        await self.app(scope, receive, send)
