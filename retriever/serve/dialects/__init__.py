"""Other systems' dialects, mounted by ``searchtrace serve --dialect NAME`` beside our own API.

A dialect is one module here with one function::

    def mount(app: fastapi.FastAPI, speaker: Speaker) -> None

It adds FastAPI routes to ``app`` and/or MCP endpoints through
``speaker.mcp(app, path, name, tools)`` (:class:`~.speaker.Tool`: a description,
an input schema, an async handler from the tool's arguments to a
:class:`~.speaker.ToolAnswer`, and optionally the tool's error answer in the
dialect's own error schema). Every call goes through the ``speaker``
(:class:`~.speaker.Speaker`): ``await speaker.search(request)`` takes our
request's fields and returns our response record (``speaker.passages`` the
first ``n`` passages, for systems whose results are documents);
``speaker.http(request, route, work)`` answers a route's JSON under its server
span. Each call is traced with the dialect as ``searchtrace.source`` (its
:class:`~searchtrace.traces.vocabulary.Source` value is the dialect's name).

A dialect only translates: their request into our request's fields, our
response record into their answer. No retrieval logic lives here. Where the
seed system clamps or ignores a bad argument, its dialect does the same and
says so where its answer has a place for it; our own API stays strict.

:data:`DIALECTS` names each module (imported only when served, so the command
line stays light); one line per dialect.

Over MCP stdio (``serve --mcp stdio``) there is one server and no routes: a
dialect of :data:`STDIO` (its seed speaks stdio) is mounted with ``app`` None,
which records its tools, and they are listed beside ours on that server
(:func:`stdio_speakers`, :class:`StdioDialects`). The others are HTTP routes and MCP endpoints only.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from searchtrace.errors import ValidationError

if TYPE_CHECKING:
    import mcp_types as types

    from searchtrace.retriever.serve.dialects.speaker import Answer, Speaker
    from searchtrace.retriever.serve.service import Service

__all__ = ["DIALECTS", "STDIO", "check_dialects", "StdioDialects", "mount_dialects", "stdio_speakers"]

_HERE = "searchtrace.retriever.serve.dialects"

DIALECTS: dict[str, str] = {
    "hawki": f"{_HERE}.hawki",
    "huginn": f"{_HERE}.huginn",
    "proxysql": f"{_HERE}.proxysql",
    "singlestore-kag": f"{_HERE}.singlestore_kag",
    "concept-rag": f"{_HERE}.concept_rag",
}
"""Dialect name (``--dialect``, and the traces' source) -> the module whose ``mount(app, speaker)`` mounts it."""

STDIO: frozenset[str] = frozenset({"concept-rag"})
"""The dialects whose seed speaks MCP over stdio: served by ``serve --mcp stdio`` too, their tools beside ours."""


def check_dialects(names: Sequence[str]) -> list[str]:
    """``names`` without repeats, each a known dialect. Raises ValidationError listing the known ones."""
    unknown = [n for n in names if n not in DIALECTS]
    if unknown:
        raise ValidationError(f"--dialect: unknown dialect {unknown[0]!r}; known: {', '.join(DIALECTS)}",
                              field="dialect")
    return list(dict.fromkeys(names))


def mount_dialects(app: Any, service: Service, names: Sequence[str], answer: Answer) -> list[Speaker]:
    """Mount each named dialect on ``app`` (``answer``: the app's traced HTTP answer, ``http.traced``); the
    speakers returned hold what the app must run and exempt."""
    from searchtrace.retriever.serve.dialects.speaker import Speaker
    from searchtrace.traces import vocabulary as v

    speakers = []
    for name in check_dialects(names):
        speaker = Speaker(service, v.Source(name), answer)
        importlib.import_module(DIALECTS[name]).mount(app, speaker)
        speakers.append(speaker)
    return speakers


@dataclass(frozen=True)
class StdioDialects:
    """The served dialects' tools on the stdio server, beside ours (``mcp_tools.MoreTools``); each call through
    its dialect's speaker (traced with the dialect as the source, answered in its shapes)."""

    speakers: tuple[Speaker, ...]

    @property
    def tools(self) -> list[types.Tool]:
        from searchtrace.retriever.serve.dialects.speaker import listing

        return [t for s in self.speakers for endpoint in s.endpoints.values() for t in listing(endpoint)]

    async def call(self, name: str, arguments: dict[str, Any] | None, meta: Mapping[str, Any] | None,
                   session: str | None) -> types.CallToolResult:
        """One call of a dialect's tool (one of :attr:`tools`)."""
        for speaker in self.speakers:
            for endpoint in speaker.endpoints.values():
                if name in endpoint:
                    return await speaker.call(endpoint, name, arguments, meta, session)
        raise KeyError(name)  # build_server routes only the names of :attr:`tools` here


def stdio_speakers(service: Service, names: Sequence[str]) -> list[Speaker]:
    """Each named dialect's tools for the stdio server (``speaker.endpoints``; no route is mounted). Raises
    ValidationError naming a dialect that is not one of :data:`STDIO`."""
    from searchtrace.retriever.serve.dialects.speaker import Speaker, no_http
    from searchtrace.traces import vocabulary as v

    speakers = []
    for name in check_dialects(names):
        if name not in STDIO:
            raise ValidationError(f"--dialect {name}: served over HTTP only (its routes and MCP endpoints); "
                                  f"leave out --mcp stdio (over stdio: {', '.join(sorted(STDIO))})",
                                  field="dialect")
        speaker = Speaker(service, v.Source(name), no_http)
        importlib.import_module(DIALECTS[name]).mount(None, speaker)
        speakers.append(speaker)
    return speakers
