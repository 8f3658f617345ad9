"""Other systems' dialects, mounted by ``searchtrace serve --dialect NAME`` beside our own API.

A dialect is one module here with one function::

    def mount(app: fastapi.FastAPI, speaker: Speaker) -> None

It adds FastAPI routes to ``app`` and/or MCP endpoints through
``speaker.mcp(app, path, name, tools)`` (:class:`~.speaker.Tool`: a description,
an input schema, and an async handler from the tool's arguments to a
:class:`~.speaker.ToolAnswer`). Every call goes through the ``speaker``
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
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from searchtrace.errors import ValidationError

if TYPE_CHECKING:
    from searchtrace.retriever.serve.dialects.speaker import Answer, Speaker
    from searchtrace.retriever.serve.service import Service

__all__ = ["DIALECTS", "mount_dialects"]

_HERE = "searchtrace.retriever.serve.dialects"

DIALECTS: dict[str, str] = {
    "hawki": f"{_HERE}.hawki",
    "huginn": f"{_HERE}.huginn",
    "proxysql": f"{_HERE}.proxysql",
    "singlestore-kag": f"{_HERE}.singlestore_kag",
}
"""Dialect name (``--dialect``, and the traces' source) -> the module whose ``mount(app, speaker)`` mounts it."""


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
