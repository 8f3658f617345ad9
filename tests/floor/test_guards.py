"""The rules at every server's door (``serve`` and the dashboard): the Host and Origin check and the API key,
on HTTP requests and websocket upgrades alike, as pure ASGI, with no server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from searchtrace.guards import BearerAuth, HostCheck, exposure_problem, host_name, origin_name, own_names

DENIAL: dict[str, Any] = {"websocket.http.response": {}}  # the server offers ASGI's denial response


async def _inner(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.accept"})
    else:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"inside"})


def _call(app: Any, kind: str, headers: dict[str, str], path: str = "/_stcore/stream",
          extensions: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """What ``app`` sends for one request (or websocket upgrade) with ``headers``."""
    scope = {"type": kind, "path": path, "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
             "extensions": extensions or {}}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"} if kind == "websocket" else {"type": "http.request", "body": b""}

    async def send(message: Any) -> None:
        sent.append(dict(message))

    asyncio.run(app(scope, receive, send))
    return sent


def _status(sent: list[dict[str, Any]]) -> int | str:
    first = sent[0]
    return first["status"] if "status" in first else first["type"]


def _error_field(sent: list[dict[str, Any]]) -> str:
    return json.loads(sent[1]["body"])["error"]["field"]


def test_host_names_are_read_without_their_port():
    assert [host_name(h) for h in ("127.0.0.1:80", "Example.org", "[::1]:8765", "[::1]", "::1")] == [
        "127.0.0.1", "example.org", "::1", "::1", "::1"]
    assert (origin_name("http://localhost:8501"), origin_name("null"), origin_name("https://a.b/x")) == (
        "localhost", None, "a.b")


@pytest.mark.parametrize("kind", ["http", "websocket"])
def test_a_foreign_host_or_origin_is_refused_on_requests_and_upgrades(kind):
    app = HostCheck(_inner, ("dash.example",), open_paths=frozenset({"/health"}))
    ext = DENIAL if kind == "websocket" else None
    refused = _call(app, kind, {"host": "evil.com:8501"}, extensions=ext)
    assert _status(refused) == 421 and _error_field(refused) == "Host"
    refused = _call(app, kind, {"host": "127.0.0.1:8501", "origin": "http://evil.com:8501"}, extensions=ext)
    assert _status(refused) == 421 and _error_field(refused) == "Origin"
    ok = "websocket.accept" if kind == "websocket" else 200
    for host in ("127.0.0.1:8501", "localhost", "[::1]:8501", "dash.example"):
        assert _status(_call(app, kind, {"host": host, "origin": f"https://{host}"}, extensions=ext)) == ok
    assert _status(_call(app, kind, {"host": "evil.com"}, path="/health", extensions=ext)) == ok


def test_an_upgrade_is_closed_unaccepted_where_the_server_has_no_denial_response():
    sent = _call(HostCheck(_inner, ()), "websocket", {"host": "evil.com"})
    assert [m["type"] for m in sent] == ["websocket.close"]  # the server answers the upgrade 403


def test_the_origin_refusal_names_the_cors_flag_only_where_there_is_one():
    def message(**flag: Any) -> str:
        sent = _call(HostCheck(_inner, (), **flag), "http", {"host": "localhost", "origin": "http://evil.com"})
        return json.loads(sent[1]["body"])["error"]["message"]

    assert message().endswith("nor one of --cors-origins")
    assert message(origins_flag=None) == "Origin 'http://evil.com' is not this server's"


@pytest.mark.parametrize("kind", ["http", "websocket"])
def test_the_api_key_is_required_on_requests_and_upgrades(kind):
    app = BearerAuth(_inner, "s3cret", open_paths=frozenset({"/health"}))
    ext = DENIAL if kind == "websocket" else None
    ok = "websocket.accept" if kind == "websocket" else 200
    for given in ({}, {"authorization": "Bearer wrong"}, {"authorization": "Basic s3cret"}):
        assert _status(_call(app, kind, given, extensions=ext)) == 401
    assert _status(_call(app, kind, {"authorization": "Bearer s3cret"}, extensions=ext)) == ok
    assert _status(_call(app, kind, {}, path="/health", extensions=ext)) == ok


def test_lifespan_passes_both_guards():
    seen = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["type"])

    asyncio.run(HostCheck(BearerAuth(app, "k"), ())({"type": "lifespan"}, None, None))  # type: ignore[arg-type]
    assert seen == ["lifespan"]


def test_an_address_off_loopback_needs_a_key_and_names_the_variable():
    for address in ("127.0.0.1", "::1", "localhost"):
        assert exposure_problem(address, None) is None
    for address in ("0.0.0.0", "::", "10.1.2.3", None):
        problem = exposure_problem(address, None)
        assert problem is not None and "SEARCHTRACE_API_KEY" in problem
        assert exposure_problem(address, "k") is None


def test_a_server_answers_its_own_address_and_the_listed_names():
    assert own_names("127.0.0.1", None) == ()
    assert own_names("0.0.0.0", " a.example, b.example ,") == ("a.example", "b.example")
    assert own_names("10.1.2.3", "a.example") == ("a.example", "10.1.2.3")
