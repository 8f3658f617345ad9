"""MCP ``tools/call`` spoken directly (JSON-RPC over a stdio child's lines, or POSTs over ``http.client``), the
``mcp`` SDK's client kept as the careful path for anything else.

An eval asks one tool a hundred results a query, query after query. Against
``searchtrace serve`` on loopback the SDK's client spends 4.2-5.7 ms of CPU a
call (its models, streams and task groups), this one 1.0-1.2 ms, the answer
read (BENCHMARKS.md, issue 38: ``benchmarks/bench_targets.py``). This
client speaks only what a search needs, the 2025 handshake (``initialize``,
then ``notifications/initialized``), ``tools/list`` once and ``tools/call``, and
reads only answers it can read exactly as the SDK reads them: a result whose
content is text blocks, ``isError`` a boolean, ``structuredContent`` an object,
for a tool that declares no output schema (which the SDK would check). Any
other thing it meets (a server's request but ``ping``, an answer in another
shape, a protocol version, content type or JSON it does not read, an ``https``
URL or a proxy) raises :class:`Unsupported`, and the caller asks through the
SDK from then on, which answers, or fails in its own words.

Failures are the same outcomes the SDK's are: :class:`TimeoutError`, a JSON-RPC
error (:class:`RpcError`), an HTTP error status (:class:`HttpStatus`), and a
lost connection or child (:class:`Lost`).
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import json
import os
import signal
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import orjson

from searchtrace.evals.runs.targets.keepalive import Connections, json_body
from searchtrace.evals.runs.targets.wire import may_hold_long_integer

__all__ = ["HttpStatus", "LeanHttp", "LeanStdio", "Lost", "RpcError", "ToolResult", "Unsupported", "tool_result"]

PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The handshake's revisions this client reads, the newest offered: the SDK's ``HANDSHAKE_PROTOCOL_VERSIONS``
(its legacy mode's; a test holds them equal), written out because importing the SDK's types costs 0.2 s."""
_TOOL_PAGES = 100
"""``tools/list`` pages read at most (a server paging forever is not read forever)."""
_STOP_S = 2.0
"""How long a child has to exit after its stdin closes, then after SIGTERM (the SDK's grace periods)."""


class Unsupported(Exception):  # noqa: N818 - a signal to the caller, not a failure
    """Something this client does not speak: ask through the SDK."""


class Lost(Exception):  # noqa: N818 - named for what happened
    """The connection (the stdio child) is gone; the next call opens a new one."""


class RpcError(Exception):
    """The server answered the call with a JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{message} (MCP error {code})")
        self.code, self.message = code, message


class HttpStatus(Exception):  # noqa: N818 - named for what it carries
    """An HTTP error status, with the answer's headers (lower-case names)."""

    def __init__(self, status: int, headers: dict[str, str]) -> None:
        super().__init__(f"HTTP {status}")
        self.status, self.headers = status, headers


class Block:
    """A content block, as the caller reads the SDK's: its ``type`` and ``text``."""

    __slots__ = ("text", "type")

    def __init__(self, text: str) -> None:
        self.type, self.text = "text", text


class ToolResult:
    """A ``tools/call`` result, read as the caller reads the SDK's ``CallToolResult``."""

    __slots__ = ("content", "is_error", "structured_content")

    def __init__(self, content: list[Block], is_error: bool, structured_content: dict[str, Any] | None) -> None:
        self.content, self.is_error, self.structured_content = content, is_error, structured_content


_RESULT_KEYS = frozenset({"content", "isError", "structuredContent", "_meta"})


def tool_result(result: Any) -> ToolResult:
    """The result, when it is one this client reads exactly as the SDK does.

    Raises:
        Unsupported: any other shape (a block that is not text, a field the SDK would read or refuse).
    """
    if not isinstance(result, dict) or not result.keys() <= _RESULT_KEYS:
        raise Unsupported("a tools/call result with fields this client does not read")
    content, is_error, structured = result.get("content"), result.get("isError", False), \
        result.get("structuredContent")
    if not isinstance(content, list) or type(is_error) is not bool or not (
            structured is None or isinstance(structured, dict)) or not isinstance(result.get("_meta", {}), dict):
        raise Unsupported("a tools/call result in a shape this client does not read")
    blocks = []
    for block in content:
        if type(block) is not dict or block.get("type") != "text" or type(block.get("text")) is not str \
                or len(block) != 2:
            raise Unsupported("a content block that is not plain text")
        blocks.append(Block(block["text"]))
    return ToolResult(blocks, is_error, structured)


def decode(data: bytes) -> Any:
    """A JSON message, read as the SDK reads it; :class:`Unsupported` for what orjson refuses (a lone surrogate,
    NaN, a byte order mark). orjson reads an integer beyond 64 bits as a float, so a message with a run of 19
    digits (in a string, as a rule: a timestamp in nanoseconds, an id) is read again by the standard library,
    which keeps such an integer whole, as the SDK does."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise Unsupported("a message orjson does not read") from None
    if may_hold_long_integer(data):
        return json.loads(data)
    return value


def encode(message: dict[str, Any]) -> bytes:
    try:
        return json_body(message)
    except (TypeError, ValueError):
        raise Unsupported("arguments that are not plain JSON") from None


def _answer(message: Any, ident: int) -> dict[str, Any]:
    """The result of the response to request ``ident``. Raises RpcError for an error response."""
    if type(message) is not dict or message.get("jsonrpc") != "2.0" or message.get("id") != ident:
        raise Unsupported("a response this client does not read")
    if "error" in message:
        error = message["error"]
        if type(error) is not dict or type(error.get("code")) is not int or type(error.get("message")) is not str:
            raise Unsupported("an error response this client does not read")
        raise RpcError(error["code"], error["message"])
    result = message.get("result")
    if type(result) is not dict:
        raise Unsupported("a response with no result object")
    return result


def _initialize(ident: int) -> dict[str, Any]:
    from searchtrace import __version__

    return {"jsonrpc": "2.0", "id": ident, "method": "initialize",
            "params": {"protocolVersion": PROTOCOL_VERSIONS[-1], "capabilities": {},
                       "clientInfo": {"name": "searchtrace", "version": __version__}}}


def _version_of(result: dict[str, Any]) -> str:
    version = result.get("protocolVersion")
    if version not in PROTOCOL_VERSIONS:
        raise Unsupported(f"protocol version {version!r}")
    return str(version)


def _check_tool(tool: str, ask: Callable[[dict[str, Any]], dict[str, Any]], ids: Iterator[int]) -> None:
    """Read ``tools/list`` (its pages) until ``tool`` is on it. Raises Unsupported when the tool declares an output
    schema (the SDK checks each answer against it) or a page is not a list of tools; a tool not listed is
    called all the same, as the SDK calls it, and the server's answer says what is wrong."""
    cursor: Any = None
    for _ in range(_TOOL_PAGES):
        params = {"cursor": cursor} if cursor is not None else {}
        page = ask({"jsonrpc": "2.0", "id": next(ids), "method": "tools/list", "params": params})
        tools, cursor = page.get("tools"), page.get("nextCursor")
        if not isinstance(tools, list):
            raise Unsupported("a tools/list answer with no list of tools")
        for t in tools:
            if isinstance(t, dict) and t.get("name") == tool:
                if t.get("outputSchema") is not None:
                    raise Unsupported(f"tool {tool} declares an output schema")
                return
        if cursor is None:
            return


def _call(ident: int, tool: str, arguments: dict[str, Any], meta: Mapping[str, str]) -> dict[str, Any]:
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if meta:
        params["_meta"] = dict(meta)
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}


class _Slot:
    __slots__ = ("done", "error", "message")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.message: Any = None
        self.error: BaseException | None = None


class _Child:
    """One stdio child: its lines read by a thread of its own, each response handed to the call waiting for it."""

    def __init__(self, command: Sequence[str]) -> None:
        self.proc = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     start_new_session=True)
        self.waiting: dict[int, _Slot] = {}
        self.lock = threading.Lock()
        self.writing = threading.Lock()
        """Held while a message is written (apart from ``lock``, which the reader takes to hand answers over)."""
        self.failed: BaseException | None = None
        self.reader = threading.Thread(target=self._read, name="searchtrace-mcp-stdio", daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        try:
            for line in self.proc.stdout:
                if line.strip():
                    self._take(decode(line))
            code = self.proc.wait(_STOP_S)
            self._fail(Lost(f"the stdio child exited (code {code})"))
        except Unsupported as exc:
            self._fail(exc)
        except Exception as exc:  # the pipe or the wait failed: the child is lost either way
            self._fail(Lost(f"the stdio child's output failed: {type(exc).__name__}: {exc}"))

    def _take(self, message: Any) -> None:
        if type(message) is not dict:
            raise Unsupported("a message that is not an object")
        if "method" in message:
            if "id" not in message:
                return  # a notification (a log line, progress): nothing to answer
            if message["method"] != "ping":
                raise Unsupported(f"the server's request {message['method']!r}")
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
            return
        ident = message.get("id")
        if type(ident) is not int:  # this client's ids are numbers: a null id is an error it cannot place
            raise Unsupported("a response to no request of this client's")
        with self.lock:
            slot = self.waiting.pop(ident, None)
        if slot is not None:  # none: the answer to a call that timed out
            slot.message = message
            slot.done.set()

    def _fail(self, exc: BaseException) -> None:
        with self.lock:
            if self.failed is None:
                self.failed = exc
            waiting, self.waiting = self.waiting, {}
        for slot in waiting.values():
            slot.error = exc
            slot.done.set()

    def send(self, message: dict[str, Any]) -> None:
        data = encode(message) + b"\n"
        assert self.proc.stdin is not None
        with self.writing:
            try:
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
            except (OSError, ValueError):
                raise Lost("the stdio child's input is closed") from None

    def ask(self, message: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        ident, slot = message["id"], _Slot()
        with self.lock:
            if self.failed is not None:
                raise self.failed
            self.waiting[ident] = slot
        self.send(message)
        if not slot.done.wait(timeout_s):
            with self.lock:
                self.waiting.pop(ident, None)
            with contextlib.suppress(Lost, Unsupported):
                self.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                           "params": {"requestId": ident, "reason": "timed out"}})
            raise TimeoutError
        if slot.error is not None:
            raise slot.error
        return _answer(slot.message, ident)

    def stop(self) -> None:
        """Close its input, then SIGTERM, then SIGKILL its process group, each after the grace period."""
        proc = self.proc
        with contextlib.suppress(OSError, ValueError):
            assert proc.stdin is not None
            proc.stdin.close()
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if sig is not None:
                with contextlib.suppress(OSError):
                    os.killpg(proc.pid, sig)
            try:
                proc.wait(_STOP_S)
                break
            except subprocess.TimeoutExpired:
                continue
        self.reader.join(_STOP_S)
        if proc.stdout is not None:
            proc.stdout.close()


class LeanStdio:
    """Calls ``tool`` of a server run as ``command``, from any thread; one child, started at the first call.

    Args:
        command: the server's command and arguments.
        tool: the tool every call names.
    """

    def __init__(self, command: Sequence[str], tool: str) -> None:
        self.command, self.tool = list(command), tool
        self._ids = itertools.count(1)
        self._child: _Child | None = None
        self._lock = threading.Lock()

    def _open(self, timeout_s: float) -> _Child:
        with self._lock:
            if self._child is not None:
                return self._child
            try:
                child = _Child(self.command)
            except OSError as exc:
                raise Lost(f"the stdio child did not start: {exc}") from None
            try:
                _version_of(child.ask(_initialize(next(self._ids)), timeout_s))
                child.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
                _check_tool(self.tool, lambda m: child.ask(m, timeout_s), self._ids)
            except RpcError as exc:
                child.stop()
                raise Unsupported(f"the handshake was refused: {exc}") from None
            except BaseException:
                child.stop()
                raise
            self._child = child
            return child

    def call(self, arguments: dict[str, Any], meta: Mapping[str, str], timeout_s: float) -> ToolResult:
        """One ``tools/call``. Raises TimeoutError, RpcError, Lost or Unsupported."""
        child = self._child or self._open(timeout_s)
        return tool_result(child.ask(_call(next(self._ids), self.tool, arguments, meta), timeout_s))

    def reset(self) -> None:
        """Stop the child: the next call starts a new one."""
        with self._lock:
            child, self._child = self._child, None
        if child is not None:
            child.stop()

    close = reset


_ACCEPT = "application/json, text/event-stream"


def _messages(response: http.client.HTTPResponse) -> Iterator[Any]:
    """Each event's data in an event stream, decoded, until the stream ends."""
    data: list[bytes] = []
    while True:
        line = response.readline()
        if not line:
            return
        line = line.rstrip(b"\r\n")
        if line:
            field, _, value = line.partition(b":")
            if field == b"data":
                data.append(value[1:] if value.startswith(b" ") else value)
        elif data:
            message, data = decode(b"\n".join(data)), []
            yield message


class LeanHttp:
    """Calls ``tool`` at a streamable HTTP endpoint, from any thread; a kept connection per thread.

    Args:
        url: the endpoint (``http://``, no proxy: :func:`keepalive.plain_http`).
        tool: the tool every call names.
        headers: sent with every request (the target file's, a Bearer token among them).
        timeout_s: each socket operation's limit.
    """

    def __init__(self, url: str, tool: str, headers: Mapping[str, str], timeout_s: float) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "", parts.port or 80
        self.target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.tool, self.timeout_s = tool, timeout_s
        self.fixed = {"Content-Type": "application/json", "Accept": _ACCEPT, "Accept-Encoding": "identity",
                      **headers}
        self._ids = itertools.count(1)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._opening = threading.Lock()
        self._connections = Connections(self.host, self.port, timeout_s)
        self._headers: dict[str, str] | None = None
        """Every request's headers once the session is open (its id and version among them); None: closed."""
        self._listener: http.client.HTTPConnection | None = None
        self._unsupported: Unsupported | None = None

    def _post(self, message: dict[str, Any], headers: Mapping[str, str]) -> Any:
        """The response to ``message`` (None for a notification's 202)."""
        if self._unsupported is not None:
            raise self._unsupported
        body = encode(message)
        for _ in range(2):
            conn = self._connections.get()
            reused = conn.sock is not None
            try:
                conn.request("POST", self.target, body, dict(headers))
                response = conn.getresponse()
                return self._read(conn, response, message.get("id"), headers)
            except (TimeoutError, Unsupported, HttpStatus):
                conn.close()
                if self._unsupported is not None:
                    raise self._unsupported from None
                raise
            except UnicodeError:
                conn.close()
                raise Unsupported("a header that is not Latin-1") from None
            except (http.client.HTTPException, OSError) as exc:
                conn.close()
                if self._unsupported is not None:
                    raise self._unsupported from None
                if reused:
                    continue  # a kept connection the server closed meanwhile: once more, on a new one
                raise Lost(f"{type(exc).__name__}: {exc}") from None
        raise Lost("the connection closed twice")

    def _read(self, conn: http.client.HTTPConnection, response: http.client.HTTPResponse, ident: Any,
              headers: Mapping[str, str]) -> Any:
        status, kind = response.status, (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
        self._local.session_id = response.getheader("Mcp-Session-Id")
        if (response.getheader("Content-Encoding") or "identity").lower() != "identity":
            raise Unsupported("a compressed answer")
        if status >= 400:
            response.read()
            raise HttpStatus(status, {k.lower(): v for k, v in response.getheaders()})
        if ident is None:
            response.read()
            if status not in (200, 202):
                raise Unsupported(f"HTTP {status} to a notification")
            return None
        if status != 200:
            raise Unsupported(f"HTTP {status} to a request")
        if kind == "application/json":
            message = decode(response.read())
        elif kind == "text/event-stream":
            message = self._event(response, headers)
        else:
            raise Unsupported(f"an answer of type {kind or 'none'}")
        if response.will_close:
            conn.close()
        return message

    def _event(self, response: http.client.HTTPResponse, headers: Mapping[str, str]) -> Any:
        """The response in an event stream (notifications skipped, a ping answered), the stream read to its end."""
        found = None
        for message in _messages(response):
            if type(message) is dict and "method" in message:
                if "id" in message:
                    self._serve(message, headers)
                continue
            found = message
        if found is None:
            raise Unsupported("an event stream that ended with no response")
        return found

    def _serve(self, request: dict[str, Any], headers: Mapping[str, str]) -> None:
        """Answer the server's ``ping``; any other request of the server's is the SDK's to answer."""
        if request["method"] != "ping":
            raise Unsupported(f"the server's request {request['method']!r}")
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)
        try:
            conn.request("POST", self.target, encode({"jsonrpc": "2.0", "id": request["id"], "result": {}}),
                         dict(headers))
            conn.getresponse().read()
        except (http.client.HTTPException, OSError):
            pass  # the server went away: the call waiting on it fails in its own way
        finally:
            conn.close()

    def _listen(self, headers: dict[str, str]) -> None:
        """The session's own event stream (a GET), where a server sends requests not tied to a call: a ping is
        answered, anything else hands the session to the SDK (every call in flight is woken to ask there)."""
        conn = http.client.HTTPConnection(self.host, self.port)  # no timeout: the server speaks when it will
        with self._lock:
            if self._headers is not headers:
                return  # reset meanwhile
            self._listener = conn
        try:
            conn.request("GET", self.target, headers={**{k: v for k, v in headers.items() if k != "Content-Type"},
                                                      "Accept": "text/event-stream"})
            response = conn.getresponse()
            kind = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
            if response.status != 200 or kind != "text/event-stream":
                return  # no stream offered (405): the server asks only inside a call's own stream
            for message in _messages(response):
                if type(message) is dict and "method" in message and "id" in message:
                    self._serve(message, headers)
        except Unsupported as exc:
            self._abandon(exc)
        except (http.client.HTTPException, OSError, ValueError):
            pass  # the stream ended: the session was reset or closed, or the server went away
        finally:
            conn.close()

    def _abandon(self, why: Unsupported) -> None:
        """Leave the session to the SDK: each call in flight is woken (its socket shut) and raises ``why``."""
        with self._lock:
            self._unsupported = why
        for sock in self._connections.sockets():
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def _session(self) -> dict[str, str]:
        with self._opening:
            if self._headers is not None:
                return self._headers
            return self._handshake()

    def _handshake(self) -> dict[str, str]:
        ident = next(self._ids)
        first = self._post(_initialize(ident), self.fixed)
        session = self._local.session_id  # the initialize answer's, read in this thread
        version = _version_of(_answer(first, ident))
        headers = {**self.fixed, "MCP-Protocol-Version": version}
        if session:
            headers["Mcp-Session-Id"] = session
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
        _check_tool(self.tool, lambda m: _answer(self._post(m, headers), m["id"]), self._ids)
        self._headers = headers
        if session:  # a session of its own: the server may ask things outside a call, on the session's stream
            threading.Thread(target=self._listen, args=(headers,), name="searchtrace-mcp-listen", daemon=True).start()
        return headers

    def call(self, arguments: dict[str, Any], meta: Mapping[str, str], timeout_s: float) -> ToolResult:
        """One ``tools/call``. Raises TimeoutError, RpcError, HttpStatus, Lost or Unsupported."""
        headers = self._headers or self._open_session()
        ident = next(self._ids)
        return tool_result(_answer(self._post(_call(ident, self.tool, arguments, meta), headers), ident))

    def _open_session(self) -> dict[str, str]:
        try:
            return self._session()
        except RpcError as exc:
            raise Unsupported(f"the handshake was refused: {exc}") from None

    def reset(self) -> None:
        """Forget the session (the server ended it, or it broke): the next call opens a new one."""
        with self._lock:
            headers, self._headers = self._headers, None
            listener, self._listener = self._listener, None
        if listener is not None and listener.sock is not None:
            with contextlib.suppress(OSError):
                listener.sock.shutdown(socket.SHUT_RDWR)
        if headers and "Mcp-Session-Id" in headers:
            with contextlib.suppress(Exception):  # ending a session is a courtesy: the server may have ended it
                conn = http.client.HTTPConnection(self.host, self.port, timeout=min(self.timeout_s, 5.0))
                try:
                    conn.request("DELETE", self.target, headers={k: v for k, v in headers.items()
                                                                 if k not in ("Content-Type",)})
                    conn.getresponse().read()
                finally:
                    conn.close()

    def close(self) -> None:
        self.reset()
        self._connections.close()
