"""Who may knock: the rules every server of ours keeps at its door, as pure ASGI guards.

``searchtrace serve`` and ``searchtrace dashboard`` both stand behind them. A
page on a DNS-rebinding domain reaches a loopback server with its own name in
``Host`` (and its own origin in ``Origin``): :class:`HostCheck` answers only
this server's names. An address off loopback needs an API key
(:func:`exposure_problem`), which :class:`BearerAuth` then requires of every
request. Both guard HTTP requests and websocket upgrades alike; a refusal is
the error object, before anything behind the door sees the request.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from searchtrace import environment as names
from searchtrace.errors import SearchtraceError, Unauthorized, ValidationError, error_object

__all__ = ["BearerAuth", "HostCheck", "exposure_problem", "host_name", "is_loopback", "origin_name", "own_names",
           "refuse", "send_error"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

WILDCARDS = frozenset({"0.0.0.0", "::"})
"""Addresses that bind every interface: no name of their own."""

GUARDED = frozenset({"http", "websocket"})
"""The scope types a guard checks (``lifespan`` passes through)."""


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and any loopback address (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def exposure_problem(address: str | None, api_key: str | None) -> str | None:
    """Why a server may not listen on ``address`` without ``api_key`` (None: it may).

    Off loopback (or unset, which some servers take as every interface) a key is
    required; the message names the variable that holds it.
    """
    if api_key or (address is not None and is_loopback(address)):
        return None
    return (f"refusing to listen on {address or 'every address'}, which is not a loopback address, without an "
            f"API key: set {names.SEARCHTRACE_API_KEY} (clients send it as 'Authorization: Bearer ...')")


def own_names(address: str | None, allowed_hosts: str | None) -> tuple[str, ...]:
    """The names a server answers beside the loopback ones: ``--allowed-hosts`` (comma-separated) and the
    address it binds, unless that is loopback or every interface."""
    listed = tuple(h.strip() for h in (allowed_hosts or "").split(",") if h.strip())
    bound = (address,) if address and not is_loopback(address) and address not in WILDCARDS else ()
    return listed + bound


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


async def send_error(send: Send, status: int, exc: SearchtraceError,
                     headers: list[tuple[bytes, bytes]] | None = None, trace_id: str = "") -> None:
    """Answer the error object of ``exc`` with ``status`` (and ``x-trace-id`` when there is a trace)."""
    await _answer(send, "http.response", status, exc, headers, trace_id)


async def refuse(scope: Scope, send: Send, status: int, exc: SearchtraceError,
                 headers: list[tuple[bytes, bytes]] | None = None) -> None:
    """Refuse a request or a websocket upgrade with the error object and ``status``.

    An upgrade is refused with an HTTP answer where the server offers ASGI's
    denial response, else by closing before accepting (the server answers 403).
    """
    if scope["type"] == "http":
        return await send_error(send, status, exc, headers)
    if "websocket.http.response" in (scope.get("extensions") or {}):
        return await _answer(send, "websocket.http.response", status, exc, headers, "")
    await send({"type": "websocket.close", "code": 1008, "reason": exc.message[:120]})


async def _answer(send: Send, kind: str, status: int, exc: SearchtraceError,
                  headers: list[tuple[bytes, bytes]] | None, trace_id: str) -> None:
    body = json.dumps(error_object(exc)).encode()
    extra = [(b"x-trace-id", trace_id.encode())] if trace_id else []
    await send({"type": f"{kind}.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *(headers or []), *extra]})
    await send({"type": f"{kind}.body", "body": body})


class BearerAuth:
    """Requires ``Authorization: Bearer <key>`` (compared in constant time) on every request and websocket
    upgrade but those to ``open_paths`` (a load balancer's probes)."""

    def __init__(self, app: ASGIApp, api_key: str, open_paths: frozenset[str] = frozenset()) -> None:
        self.app = app
        self.key = api_key.encode()
        self.open_paths = open_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in GUARDED or scope["path"] in self.open_paths:
            return await self.app(scope, receive, send)
        given = dict(scope["headers"]).get(b"authorization", b"")
        scheme, _, token = given.partition(b" ")
        if scheme.lower() == b"bearer" and hmac.compare_digest(token.strip(), self.key):
            return await self.app(scope, receive, send)
        await refuse(scope, send, 401, Unauthorized(
            f"missing or wrong API key: send 'Authorization: Bearer <{names.SEARCHTRACE_API_KEY}>'"),
            headers=[(b"www-authenticate", b'Bearer realm="searchtrace"')])


class HostCheck:
    """Answers 421 to a request or websocket upgrade whose ``Host`` (or ``Origin``) is not this server's.

    Only the loopback names (with or without a port) and ``allowed_hosts`` (the
    address the server binds, ``--allowed-hosts``) are this server's. An
    ``Origin``, when a browser sends one, must name one of those too, or be one
    of ``cors_origins`` (the flag ``origins_flag``, named when one is refused).
    ``open_paths`` (the probes) answer whatever the name.
    """

    def __init__(self, app: ASGIApp, allowed_hosts: tuple[str, ...], cors_origins: tuple[str, ...] = (),
                 open_paths: frozenset[str] = frozenset(), origins_flag: str | None = "--cors-origins") -> None:
        self.app = app
        self.origins_hint = f", nor one of {origins_flag}" if origins_flag else ""
        self.hosts = frozenset(host_name(h) for h in allowed_hosts)
        self.origins = frozenset(o.rstrip("/").lower() for o in cors_origins)
        self.open_paths = open_paths

    def ours(self, name: str | None) -> bool:
        return name is not None and (is_loopback(name) or name in self.hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in GUARDED or scope["path"] in self.open_paths:
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        host = headers.get(b"host", b"").decode("latin-1")
        if not self.ours(host_name(host)):
            return await refuse(scope, send, 421, ValidationError(
                f"Host {host!r} is not this server's: it answers the loopback names, the address it binds "
                "and --allowed-hosts", field="Host"))
        origin = headers.get(b"origin", b"").decode("latin-1")
        if origin and origin.rstrip("/").lower() not in self.origins and not self.ours(origin_name(origin)):
            return await refuse(scope, send, 421, ValidationError(
                f"Origin {origin!r} is not this server's{self.origins_hint}", field="Origin"))
        await self.app(scope, receive, send)
