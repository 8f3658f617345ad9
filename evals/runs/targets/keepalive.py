"""A JSON POST over the standard library's ``http.client``, one keep-alive connection per thread.

An eval asks its target a hundred results a query, a query after another:
``httpx`` spends about 0.7 ms of CPU a request more than ``http.client`` (the
sample's served answers over loopback, 75 kB each, measured 1.6 against 0.9 ms
with the JSON decoded; BENCHMARKS.md, issue 38). :class:`KeepAlive` does only
what both do alike: a plain ``http://`` POST, no proxy, an answer not
compressed. Where it cannot (the connection fails, the answer is compressed),
it answers None and the caller asks through ``httpx``, which then answers, or
fails in its own words; a timeout is a timeout either way.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import threading
from collections.abc import Mapping
from typing import Any, NamedTuple
from urllib.parse import urlsplit

__all__ = ["Connections", "KeepAlive", "Reply", "json_body", "plain_http"]

_PROXY_VARIABLES = ("http_proxy", "all_proxy")
_HEADERS = {"Content-Type": "application/json", "Accept": "*/*", "Accept-Encoding": "identity"}


_PLAIN_URL = re.compile(r"http://[A-Za-z0-9._~:/?\[\]!$&'()*+,;=%-]+")
"""A URL both clients send byte for byte: ``http://`` and characters no client escapes (no ``@``: no userinfo)."""


def plain_http(url: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``url`` is one :class:`KeepAlive` posts to as ``httpx`` would: ``http://``, none of the characters
    a client may escape, no user and password (``httpx`` would send them), no proxy set in the environment
    (``httpx`` would go through it), and a port that is a number."""
    env = os.environ if environ is None else environ
    if any(key.lower() in _PROXY_VARIABLES and value for key, value in env.items()):
        return False
    if not _PLAIN_URL.fullmatch(url):
        return False
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - read for its check: a port that is not a number raises
    except ValueError:
        return False
    return bool(parts.hostname)


def json_body(payload: Any) -> bytes:
    """``payload`` as a request body, encoded as ``httpx`` encodes JSON: UTF-8, compact, no NaN.

    Raises:
        ValueError, TypeError: ``payload`` is not JSON.
    """
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


class Reply(NamedTuple):
    """What the caller reads of an answer, as it reads an ``httpx.Response``."""

    status_code: int
    headers: Any
    """``get(name)`` case-insensitive, several values joined by ``, `` (as ``httpx`` joins them)."""
    content: bytes

    @property
    def is_error(self) -> bool:
        return 400 <= self.status_code <= 599

    def json(self) -> Any:
        return json.loads(self.content)


class _Headers:
    def __init__(self, response: http.client.HTTPResponse) -> None:
        self._response = response

    def get(self, name: str, default: str | None = None) -> str | None:
        return self._response.getheader(name, default)


class Connections:
    """One ``http.client`` connection to ``host:port`` per thread, kept, and all of them closed at once.

    Args:
        timeout_s: each socket operation's limit.
    """

    def __init__(self, host: str, port: int, timeout_s: float) -> None:
        self.host, self.port, self.timeout_s = host, port, timeout_s
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: list[http.client.HTTPConnection] = []

    def get(self) -> http.client.HTTPConnection:
        """This thread's connection (made at its first use)."""
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)
            with self._lock:
                self._open.append(conn)
        return conn

    def sockets(self) -> list[Any]:
        """The sockets open now, every thread's."""
        with self._lock:
            return [c.sock for c in self._open if c.sock is not None]

    def close(self) -> None:
        with self._lock:
            for conn in self._open:
                conn.close()
            self._open.clear()


class KeepAlive:
    """POST JSON to ``url`` (``http://`` only: see :func:`plain_http`), a connection kept per thread.

    Args:
        url: the endpoint, its query string included.
        timeout_s: each socket operation's limit (connecting, sending, each read), as ``httpx``'s timeout is.
    """

    def __init__(self, url: str, timeout_s: float) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "", parts.port or 80
        self.target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.timeout_s = timeout_s
        self._connections = Connections(self.host, self.port, timeout_s)
        self._closed = False

    def post(self, payload: Any, headers: Mapping[str, str] | None = None) -> Reply | None:
        """The answer to ``payload`` sent as JSON (encoded as ``httpx`` encodes it), with ``headers`` besides the
        fixed ones; None where ``httpx`` must ask.

        Raises:
            TimeoutError: no answer within the timeout.
            ValueError: ``payload`` is not JSON (NaN among its numbers), as ``httpx`` raises it.
        """
        body = json_body(payload)
        sent = {**_HEADERS, **headers} if headers else _HEADERS
        for _ in range(2):
            if self._closed:  # closed under a search in flight (an interrupted run): httpx, closed too, says so
                return None
            conn = self._connections.get()
            reused = conn.sock is not None
            try:
                conn.request("POST", self.target, body, sent)
                response = conn.getresponse()
                content = response.read()
            except TimeoutError:
                conn.close()
                raise
            except (http.client.HTTPException, OSError):
                conn.close()
                if reused:
                    continue  # a kept connection the service closed meanwhile: once more, on a new one
                return None
            if response.will_close:
                conn.close()
            if (response.getheader("Content-Encoding") or "identity").lower() != "identity":
                return None  # compressed though not asked to be: httpx decodes it
            return Reply(response.status, _Headers(response), content)
        return None

    def close(self) -> None:
        self._closed = True
        self._connections.close()
