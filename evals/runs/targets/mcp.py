"""A target that is an MCP tool, over stdio (a child process) or streamable HTTP.

Each call is spoken directly where :mod:`.lean` reads everything the server
says (a tool answering text blocks or structured content, as searches do),
and through the ``mcp`` SDK's client from the first thing it does not: both
read an answer alike and fail alike. Each call passes the eval's ``traceparent`` in the request's ``_meta``; the
answer is read from the result's ``structuredContent`` or its first JSON text
block. A tool error (``isError``) is the query's failure; a closed connection
(the child died) is :class:`BackendUnavailable` and the next call starts a new
session, over stdio a new child.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from typing import Any

from searchtrace.errors import BackendUnavailable, SearchFailed, SearchTimeout, SearchtraceError
from searchtrace.evals.runs.targets.config import TargetFile
from searchtrace.evals.runs.targets.keepalive import plain_http
from searchtrace.evals.runs.targets.lean import (
    HttpStatus,
    LeanHttp,
    LeanStdio,
    Lost,
    RpcError,
    Unsupported,
)
from searchtrace.evals.runs.targets.mapping import Mapped, line_answer, map_results, results_of, text_answer
from searchtrace.evals.runs.targets.session import LoopSession
from searchtrace.evals.runs.targets.shaped import ShapedSearch
from searchtrace.evals.runs.targets.wire import header_values, status_error, trace_carrier

__all__ = ["McpShaped"]

log = logging.getLogger(__name__)


def _stdio(command: Sequence[str]) -> Any:
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=command[0], args=list(command[1:]), env=dict(os.environ))
    return lambda: Client(params, mode="legacy")


class _Statuses:
    """The last HTTP error status the MCP transport met, with its headers: the SDK answers every status but 404
    as one "Server returned an error response", so a 429's Retry-After is read here (concurrent calls may share
    it: a status is kept only for the call that fails next)."""

    def __init__(self) -> None:
        self.last: tuple[int, dict[str, str]] | None = None

    async def hook(self, response: Any) -> None:
        if response.status_code >= 400:
            self.last = response.status_code, {k.lower(): v for k, v in response.headers.items()}

    def take(self) -> tuple[int, dict[str, str]] | None:
        last, self.last = self.last, None
        return last


def _http(url: str, headers: dict[str, str], timeout_s: float, statuses: _Statuses) -> Any:
    from contextlib import asynccontextmanager

    import httpx2
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client

    @asynccontextmanager
    async def connect() -> Any:
        async with httpx2.AsyncClient(headers=headers, timeout=timeout_s,
                                      event_hooks={"response": [statuses.hook]}) as http:
            async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                yield client

    return connect


class McpShaped(ShapedSearch):
    """Call the file's tool for each page.

    Args:
        spec: the target file (transport ``mcp-stdio`` or ``mcp-http``).
        endpoint: the URL (``mcp-http``) or the command, its words (``mcp-stdio``).
        origin: how errors name the target.
    """

    def __init__(self, spec: TargetFile, endpoint: str | Sequence[str], origin: str) -> None:
        super().__init__(spec, origin)
        self.statuses = _Statuses()
        self.lean: LeanHttp | LeanStdio | None
        if isinstance(endpoint, str):
            headers = header_values(spec.headers, spec.origin)
            self.lean = LeanHttp(endpoint, spec.target.tool, headers, spec.target.timeout_s) \
                if plain_http(endpoint) else None
            self._connect = _http(endpoint, headers, spec.target.timeout_s, self.statuses)
        else:
            self.lean = LeanStdio(endpoint, spec.target.tool)
            self._connect = _stdio(endpoint)
        self._sdk: LoopSession | None = None
        self._switch = threading.Lock()
        self._closed = False

    @property
    def session(self) -> LoopSession:
        """The SDK's session, its loop started at the first call it answers."""
        with self._switch:
            if self._closed:
                raise BackendUnavailable(f"{self.origin}: the target was closed (the run is ending)")
            if self._sdk is None:
                self._sdk = LoopSession(self._connect)
            return self._sdk

    def _to_sdk(self, lean: LeanHttp | LeanStdio, why: Unsupported) -> None:
        """Leave the direct client for the SDK's, for this call and every later one."""
        with self._switch:
            if self.lean is not lean:
                return
            self.lean = None
        log.info("%s: asked through the mcp SDK from now on: %s", self.origin, why)
        lean.close()

    def _result(self, arguments: dict[str, Any], origin: str) -> Any:
        timeout = self.spec.target.timeout_s
        lean = self.lean
        if lean is not None:
            try:
                return lean.call(arguments, trace_carrier(), timeout)
            except Unsupported as why:
                self._to_sdk(lean, why)
            except Exception as exc:
                if self.lean is lean:
                    raise self._lean_error(lean, exc, origin) from None
                # the direct client was left for the SDK under this call (another call met what it does not
                # read, and closed it): this call is asked through the SDK too, not failed

        session = self.session
        self.statuses.take()  # a status an earlier call met is not this call's
        try:
            return session.call(self.spec.target.tool, arguments, trace_carrier(), timeout)
        except Exception as exc:
            raise self._error(session, exc, origin) from None

    def _timeout(self, origin: str) -> SearchTimeout:
        return SearchTimeout(f"{origin}: no answer within {self.spec.target.timeout_s:g} s")

    def _refused(self, origin: str, message: str, code: int) -> SearchFailed:
        """The server refused the call itself (an unknown tool, bad arguments): the session is sound."""
        return SearchFailed(f"{origin}: tool {self.spec.target.tool}: {message} (MCP error {code})",
                            field=self.spec.target.tool)

    def _lean_error(self, lean: LeanHttp | LeanStdio, exc: Exception, origin: str) -> SearchtraceError:
        """The direct client's failure as the seam's error, in the words the SDK's path gives."""
        if isinstance(exc, TimeoutError):
            return self._timeout(origin)
        if isinstance(exc, RpcError):
            return self._refused(origin, exc.message, exc.code)
        lean.reset()
        if isinstance(exc, HttpStatus):
            return status_error(origin, exc.status, exc.headers)
        return _lost(origin, str(exc) if isinstance(exc, Lost) else _named(exc))

    def _error(self, session: LoopSession, exc: Exception, origin: str) -> SearchtraceError:
        """The SDK's exception as the seam's error; a broken session is dropped so the next call reconnects."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        if isinstance(exc, TimeoutError) or (isinstance(exc, MCPError) and exc.code == REQUEST_TIMEOUT):
            return self._timeout(origin)
        status = _status(exc) or self.statuses.take()
        exc = _leaf(exc)
        if status is None and isinstance(exc, MCPError) and exc.code != CONNECTION_CLOSED:
            return self._refused(origin, exc.message, exc.code)
        session.reset()
        if status is not None:
            return status_error(origin, status[0], status[1])
        return _lost(origin, exc.message if isinstance(exc, MCPError) else _named(exc))

    def fetch(self, body: dict[str, Any], offset: int, size: int) -> list[Mapped]:
        origin = self.where(offset)
        result = self._result(body, origin)
        if result.is_error:
            text = " ".join(getattr(b, "text", "") for b in result.content)[:300]
            raise SearchFailed(f"{origin}: tool {self.spec.target.tool} answered an error: {text or 'no message'}",
                               field=self.spec.target.tool)
        if self.spec.answer.source == "lines":
            return map_results(line_answer(result.content, self.spec.answer, origin), self.spec.answer, "lines",
                               origin)
        if self.spec.answer.source == "text":
            answer = text_answer(result.content, origin)
        else:
            answer = result.structured_content
            if answer is None:
                raise SearchFailed(f"{origin}: tool {self.spec.target.tool} answered no structuredContent "
                                   "([answer] source = \"text\" reads a JSON text block)", field="structuredContent")
        items, where = results_of(answer, self.spec.answer, origin)
        return map_results(items, self.spec.answer, where, origin)

    def close(self) -> None:
        with self._switch:
            self._closed = True
            lean, self.lean = self.lean, None
            sdk, self._sdk = self._sdk, None
        if lean is not None:
            lean.close()
        if sdk is not None:
            sdk.close()


def _lost(origin: str, what: str) -> BackendUnavailable:
    """The session broke (a child that died, a connection gone): the next query opens a new one."""
    return BackendUnavailable(f"{origin}: {what} (the session is reopened on the next query)")


def _named(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc or 'connection lost'}"


def _leaf(exc: Exception) -> Exception:
    """The first exception inside task groups' exception groups: the one that says what happened."""
    while isinstance(exc, ExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _status(exc: BaseException) -> tuple[int, dict[str, str]] | None:
    """The HTTP status (and headers) inside an exception the HTTP transport raised, wrapped or not."""
    seen: list[BaseException] = [exc]
    while seen:
        e = seen.pop()
        response = getattr(e, "response", None)
        code = getattr(response, "status_code", None)
        if isinstance(code, int):
            return code, {k.lower(): v for k, v in dict(getattr(response, "headers", {})).items()}
        seen.extend(getattr(e, "exceptions", ()))
        if e.__cause__ is not None:
            seen.append(e.__cause__)
    return None
