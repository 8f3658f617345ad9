"""Our contract's POST over a kept ``http.client`` connection answers as ``httpx`` answers, over loopback.

Each answer (a result list, 429 with Retry-After, 503, 500 with and without our error object, a body
that is not JSON, a list, a compressed body, an integer past 64 bits) and each failure (a timeout,
nothing listening, a kept connection the service closed) is read through :class:`HttpTarget` twice:
over the kept connection and over ``httpx`` alone; both give the same value or the same error.
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from opentelemetry.sdk.trace import TracerProvider

from searchtrace.errors import SearchFailed as Failed
from searchtrace.errors import SearchtraceError, error_object
from searchtrace.evals.runs.target import HttpTarget
from searchtrace.evals.runs.targets.keepalive import plain_http

RESULTS = {"results": [{"id": "d1", "score": 0.5}], "traceId": "ab" * 16}


def _answer(query: str) -> tuple[int, dict[str, str], bytes]:
    """The status, headers and body the service answers ``query`` with."""
    as_json = {"Content-Type": "application/json"}
    answers = {
        "ok": (200, as_json, json.dumps({**RESULTS, "query": query}).encode()),
        "busy": (429, {"Retry-After": "3"}, b""),
        "down": (503, {}, b"unavailable"),
        "ours": (500, as_json, json.dumps(error_object(Failed("the index is gone"))).encode()),
        "plain500": (500, {}, b"Internal Server Error"),
        "text": (200, {"Content-Type": "text/html"}, b"<html>hello</html>"),
        "list": (200, as_json, b"[1, 2]"),
        "gzip": (200, {**as_json, "Content-Encoding": "gzip"}, gzip.compress(json.dumps(RESULTS).encode())),
        "big": (200, as_json, b'{"results": [], "n": 123456789012345678901234567890}'),
        "nan": (200, as_json, b'{"results": [], "bestScore": NaN}'),
    }
    return answers.get(query, answers["ok"])


class _Service:
    """A loopback HTTP/1.1 service keeping connections open; ``drop``: close each after answering, without saying
    so (as a service closing an idle connection does); ``delay``: seconds before answering."""

    def __init__(self, drop: bool = False, delay: float = 0.0) -> None:
        service = self
        self.agents: list[str] = []
        self.traceparents: list[str | None] = []
        self.connections = 0

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                service.connections += 1

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                service.agents.append(self.headers.get("User-Agent", ""))
                service.traceparents.append(self.headers.get("traceparent"))
                time.sleep(delay)
                status, headers, body = _answer(request["query"])
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                self.close_connection = drop

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/base?token=t1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def service():
    made: list[_Service] = []

    def make(**kwargs: object) -> _Service:
        made.append(_Service(**kwargs))  # type: ignore[arg-type]
        return made[-1]

    yield make
    for s in made:
        s.close()


def _outcome(target: HttpTarget, query: str) -> object:
    try:
        return repr(target({"query": query, "top_k": 3}))
    except SearchtraceError as exc:
        return type(exc).__name__, exc.message, getattr(exc, "retry_after_s", None)


def _both(url: str, timeout_s: float = 5.0) -> tuple[HttpTarget, HttpTarget]:
    """The target as the eval opens it (kept connection), and one over ``httpx`` alone (a transport given)."""
    return HttpTarget(url, timeout_s), HttpTarget(url, timeout_s, transport=httpx.HTTPTransport())


@pytest.mark.parametrize("query", ["ok", "busy", "down", "ours", "plain500", "text", "list", "gzip", "big", "nan"])
def test_each_answer_reads_as_over_httpx(service, query):
    svc = service()
    direct, over_httpx = _both(svc.url)
    try:
        for _ in range(2):  # the second over the connection the first kept
            assert _outcome(direct, query) == _outcome(over_httpx, query)
    finally:
        direct.close()
        over_httpx.close()
    # the eval's target asked without httpx (a compressed answer is asked again through it)
    agents = svc.agents[::2] if query != "gzip" else svc.agents[::3]
    assert not any("httpx" in a for a in agents) and any("httpx" in a for a in svc.agents)
    assert svc.connections == (2 if query != "gzip" else 3)


def test_each_search_carries_the_callers_traceparent_either_way(service):
    """The eval's ``search`` span reaches the service (which joins it, as ``serve`` does), over both clients;
    outside any span nothing is sent."""
    svc = service()
    tracer = TracerProvider().get_tracer("t")
    spans = []
    for target in _both(svc.url):
        try:
            with tracer.start_as_current_span("search") as span:
                target({"query": "ok", "top_k": 1})
            spans.append(span.get_span_context())
            target({"query": "ok", "top_k": 1})
        finally:
            target.close()
    sent = [(tp.split("-")[1], tp.split("-")[2]) if tp else None for tp in svc.traceparents]
    assert sent == [(format(spans[0].trace_id, "032x"), format(spans[0].span_id, "016x")), None,
                    (format(spans[1].trace_id, "032x"), format(spans[1].span_id, "016x")), None]
    assert not any("httpx" in a for a in svc.agents[:2]) and all("httpx" in a for a in svc.agents[2:])


def test_a_kept_connection_the_service_closed_is_opened_again(service):
    svc = service(drop=True)
    target = HttpTarget(svc.url, 5.0)
    try:
        answers = [target({"query": f"q{i}", "top_k": 1})["query"] for i in range(3)]
    finally:
        target.close()
    assert answers == ["q0", "q1", "q2"] and svc.connections == 3
    assert not any("httpx" in a for a in svc.agents)


def test_a_slow_service_is_a_timeout_either_way(service, monkeypatch):
    svc = service(delay=1.0)
    direct, over_httpx = _both(svc.url, timeout_s=0.2)

    def not_again(request: dict, headers: dict) -> None:
        raise AssertionError("a timeout over the kept connection is not asked again through httpx")

    monkeypatch.setattr(direct, "_post", not_again)
    try:
        assert _outcome(direct, "ok") == _outcome(over_httpx, "ok") == (
            "SearchTimeout", f"{direct.shown}: no answer within 0.2 s", None)
    finally:
        direct.close()
        over_httpx.close()


def test_nothing_listening_fails_in_httpx_s_words():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    direct, over_httpx = _both(f"http://127.0.0.1:{port}")
    outcome = _outcome(direct, "ok")
    assert outcome == _outcome(over_httpx, "ok") and outcome[0] == "BackendUnavailable"


def test_threads_each_keep_their_own_connection(service):
    svc = service()
    target = HttpTarget(svc.url, 5.0)
    try:
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda i: target({"query": f"q{i}", "top_k": 1})["query"], range(40)))
    finally:
        target.close()
    assert answers == [f"q{i}" for i in range(40)] and svc.connections <= 4


@pytest.mark.parametrize("url,environ,plain", [
    ("http://127.0.0.1:8000/v1/search?token=x", {}, True),
    ("http://svc.test/v1/search", {"NO_PROXY": "*"}, True),
    ("https://svc.test/v1/search", {}, False),
    ("http://user:pw@svc.test/v1/search", {}, False),
    ("http://svc.test/v1/search", {"HTTP_PROXY": "http://proxy:3128"}, False),
    ("http://svc.test/v1/search", {"all_proxy": "socks5://proxy"}, False),
    ("http://svc.test:port/v1/search", {}, False),
    ("http://svc.test/v1/s\u00e9arch", {}, False),
    ("http://svc.test/v1/search?q=a b", {}, False),
    ("http:///v1/search", {}, False),
])
def test_only_a_url_both_clients_send_alike_is_posted_directly(url, environ, plain):
    assert plain_http(url, environ) is plain


def test_a_closed_target_fails_as_a_closed_httpx_client_does(service):
    """Closed (an interrupted run) under searches still asked: no connection opened again, httpx's refusal."""
    svc = service()
    direct, over_httpx = _both(svc.url)
    outcomes = []
    for target in (direct, over_httpx):
        target.check()  # as resolve_target opens it
        target({"query": "ok", "top_k": 1})
        target.close()
        with pytest.raises(RuntimeError) as caught:
            target({"query": "ok", "top_k": 1})
        outcomes.append(str(caught.value))
    assert outcomes[0] == outcomes[1] and len(svc.agents) == 2  # no search reached the service after close
