"""MCP sessions on the stateless streamable HTTP transport: an ``Mcp-Session-Id`` minted for clients that use one.

The transport runs stateless (several worker processes share one socket, see
``workers.py``), so the SDK issues no session id, and in that mode it ignores
one a request carries (``mcp/server/streamable_http.py`` validates the header
only when it has an id of its own). :class:`McpSessions` mints one (uuid4
hex) for a handshake-era client (protocol 2025-11-25 and before), whose POST
comes without one, and answers it in the response's ``Mcp-Session-Id``: the
client sends it back on every later request, and any worker reads it there,
so a tool call knows its session whichever process answers
(:data:`~searchtrace.traces.spans.vocabulary.MCP_SESSION_ID`). The session holds no
state on the server: a client's closing ``DELETE`` is answered 204, and its
``GET`` for a server-sent stream 405 (the spec's "no stream here"), neither
recorded as a refusal. Protocol 2026-07-28 has no sessions: a request that
names that version is passed on untouched, and its client names the search a
fetch follows by ``traceId``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Collection, Mapping

from searchtrace.errors import ValidationError
from searchtrace.guards import ASGIApp, Message, Receive, Scope, Send, send_error

__all__ = ["SESSION_HEADER", "McpSessions", "new_session_id", "session_id"]

SESSION_HEADER = "mcp-session-id"
"""The streamable HTTP transport's session header (lower case, as ASGI carries header names)."""
_VERSION_HEADER = b"mcp-protocol-version"
_VISIBLE = re.compile(r"[\x21-\x7e]{1,128}")  # the spec's session id: visible ASCII; 128 is our bound


def new_session_id() -> str:
    """A fresh session id: 32 hex digits (uuid4)."""
    return uuid.uuid4().hex


def session_id(headers: Mapping[str, str]) -> str | None:
    """The session id a request carries, when it is one (visible ASCII, at most 128 characters), else None."""
    value = headers.get(SESSION_HEADER)
    return value if value is not None and _VISIBLE.fullmatch(value) else None


class McpSessions:
    """Mints an ``Mcp-Session-Id`` for a handshake-era client's POST without one; answers its session's GET
    (405) and DELETE (204) itself.

    Args:
        app: the MCP transport's ASGI app.
        handshake_versions: the protocol versions that use the initialize handshake (and sessions); a POST
            naming another version (``MCP-Protocol-Version``) gets no id.
    """

    def __init__(self, app: ASGIApp, handshake_versions: Collection[str]) -> None:
        self.app = app
        self.handshake = frozenset(v.encode() for v in handshake_versions)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        given = SESSION_HEADER.encode() in headers
        if given and scope["method"] == "DELETE":  # nothing is kept for a session: nothing to end
            await send({"type": "http.response.start", "status": 204, "headers": []})
            return await send({"type": "http.response.body", "body": b""})
        if given and scope["method"] == "GET":
            exc = ValidationError("this server opens no server-sent stream: the MCP endpoint takes POST")
            return await send_error(send, 405, exc, [(b"allow", b"POST, DELETE")])
        version = headers.get(_VERSION_HEADER)
        if scope["method"] != "POST" or given or (version is not None and version not in self.handshake):
            return await self.app(scope, receive, send)
        minted = new_session_id().encode()
        scope = {**scope, "headers": [*scope["headers"], (SESSION_HEADER.encode(), minted)]}

        async def answer(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (SESSION_HEADER.encode(), minted)]}
            await send(message)

        await self.app(scope, receive, answer)
