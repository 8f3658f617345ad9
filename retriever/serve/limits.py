"""Pure ASGI guards in front of every route: the Host check and the bearer token (``searchtrace.guards``, the
rules the dashboard keeps too), then the body size; and the MCP transport's own refusals rewritten.

Each answers with the error object itself, before any route (or the MCP
transport) sees the request. A refusal past the API key (a body too large, a
request the MCP transport refuses) is a trace too, whose id the ``x-trace-id``
header carries, as every other error answer's does; a request refused for its
Host or its missing key leaves no trace, so an unauthenticated caller cannot
write to the trace store.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from searchtrace.errors import PayloadTooLarge, SearchFailed, SearchtraceError, ValidationError
from searchtrace.guards import ASGIApp, Message, Receive, Scope, Send, send_error

__all__ = ["OPEN_PATHS", "BodyLimit", "Refused", "TransportRefusals"]

OPEN_PATHS = frozenset({"/healthz", "/readyz"})
"""Paths answered without the API key (a load balancer's probes)."""


Refused = Callable[[Scope, int, SearchtraceError], Awaitable[str]]
"""Records a refused request as a trace (its server span, with the error) and returns the trace id."""


class BodyLimit:
    """Refuses a request body over ``limit`` bytes with 413, whether announced (Content-Length) or streamed.

    The body is read here, up to the limit, and replayed to the app in one message. ``own_limits``: paths whose
    app reads and bounds its body itself (the OTLP receiver's, whose batches are larger than a search's).
    """

    def __init__(self, app: ASGIApp, limit: int, refused: Refused | None = None,
                 own_limits: frozenset[str] = frozenset()) -> None:
        self.app = app
        self.limit = limit
        self.refused = refused
        self.own_limits = own_limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.own_limits:  # every method: a GET's body is bounded too
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
