"""Huginn: ``GET /api/search`` and its MCP text tool ``search_knowledge`` at ``/mcp/huginn`` (seed ``001``).

Request: ``q`` (required), ``limit`` (default 10), ``min_relevance`` (0-1), ``collection``, ``mode`` ``brief``
(a ``snippet`` per result, the default) or ``full`` (``matchedChunks`` instead). Answer: ``results`` (documents:
``id``, ``title``, ``relevance``, ``confidenceBand``, ``metadata``, ``breadcrumb``, ``modifiedTime``,
``graph_context``, and ``snippet`` or ``matchedChunks``), ``bestScore``, ``traceId``, and ``noConfidentResults``
and ``retryHints`` when the results are weak. Huginn's results are documents: our relation hits go into the
``graph_context`` of the documents they came from, and ``limit`` counts passages only. The MCP text is our
result lines (``NN% relevant · band``), the retry footer and the trace pointer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import Request
from fastapi.responses import Response

from searchtrace.errors import ValidationError
from searchtrace.retriever.response import RetryHints, Triple
from searchtrace.retriever.serve import render
from searchtrace.retriever.serve.dialects.speaker import Passages, Speaker, Tool, ToolAnswer

PATH = "/api/search"
MCP_PATH = "/mcp/huginn"
TOOL = "search_knowledge"
DEFAULT_LIMIT = 10
MODES = ("brief", "full")
PARAMETERS = ("q", "limit", "min_relevance", "collection", "mode")


def _number(value: object, name: str, kind: type) -> Any:
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise ValidationError(f"{name} must be {'an integer' if kind is int else 'a number'}, got {value!r:.40}",
                              field=name) from None


def request_of(params: Mapping[str, Any]) -> tuple[dict[str, Any], int, str]:
    """Our request (without ``top_k``), the number of documents asked for, and the mode; from the query
    parameters (strings over HTTP) or the tool's arguments."""
    unknown = [k for k in params if k not in PARAMETERS]
    if unknown:
        raise ValidationError(f"{unknown[0]}: unknown parameter; Huginn's search takes {', '.join(PARAMETERS)}",
                              field=unknown[0])
    if "q" not in params:
        raise ValidationError("q: required (the search text)", field="q")
    mode = params.get("mode", "brief")
    if mode not in MODES:
        raise ValidationError(f"mode must be brief or full, got {mode!r:.40}", field="mode")
    request: dict[str, Any] = {"query": params["q"]}
    if params.get("min_relevance") is not None:
        request["min_relevance"] = _number(params["min_relevance"], "min_relevance", float)
    if params.get("collection"):
        request["collection"] = params["collection"]
    return request, _number(params.get("limit", DEFAULT_LIMIT), "limit", int), str(mode)


def _graph_context(kg: tuple[Triple, ...], doc_id: str) -> list[dict[str, str]]:
    return [{"subject": t.subject, "relation": t.relation, "object": t.object} for t in kg if t.doc_id == doc_id]


def _hints(hints: RetryHints) -> dict[str, Any]:
    return dict(hints.to_json())


def answer_of(found: Passages, mode: str) -> dict[str, Any]:
    """Huginn's answer from the passages of our response."""
    response = found.response
    kg = response.kg
    results = []
    for r in found.passages:
        m = r.metadata
        item: dict[str, Any] = {"id": r.id, "title": m.title, "relevance": r.score, "confidenceBand": r.band.value,
                                "metadata": dict(m.to_json()), "breadcrumb": " › ".join(x for x in (m.collection,
                                                                                                m.title) if x),
                                "modifiedTime": m.timestamp, "graph_context": _graph_context(kg, r.id)}
        if mode == "brief":
            text = r.content[len(m.title):] if m.title and r.content.startswith(m.title) else r.content
            item["snippet"] = render.snippet(text)  # the passage's text, its title said apart
        else:
            item["matchedChunks"] = [{"id": r.id, "relevance": r.score, "content": r.content}]
        results.append(item)
    weak = {"noConfidentResults": True} if response.no_confident_results else {}
    hints = {"retryHints": _hints(response.retry_hints)} if response.retry_hints is not None else {}
    link = {"traceUrl": response.trace_url} if response.trace_url else {}
    return {"results": results, "bestScore": response.best_score, "traceId": response.trace_id, **weak, **hints,
            **link}


def text_of(found: Passages) -> str:
    """The MCP text: one line per document, the retry footer when nothing is confident, the trace."""
    from dataclasses import replace

    return render.response_text(replace(found.response, results=found.passages))


async def search(speaker: Speaker, params: Mapping[str, Any]) -> tuple[Passages, str]:
    request, limit, mode = request_of(params)
    return await speaker.passages(request, limit, field="limit"), mode


def mount(app: Any, speaker: Speaker) -> None:
    """``GET /api/search`` and the MCP tool ``search_knowledge`` at ``/mcp/huginn``."""

    @app.get(PATH, summary="Huginn's search (dialect)", tags=["dialect: huginn"])
    async def api_search(request: Request) -> Response:
        async def work() -> dict[str, Any]:
            params = dict(request.query_params)
            found, mode = await search(speaker, params)
            return answer_of(found, mode)
        return await speaker.http(request, PATH, work)

    async def search_knowledge(args: dict[str, Any]) -> ToolAnswer:
        params = {("q" if k == "query" else k): x for k, x in args.items()}
        found, _ = await search(speaker, params)
        return ToolAnswer(None, text_of(found))

    schema = {"type": "object", "required": ["query"], "properties": {
        "query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1, "default": DEFAULT_LIMIT},
        "min_relevance": {"type": "number", "minimum": 0, "maximum": 1}, "collection": {"type": "string"}}}
    speaker.mcp(app, MCP_PATH, "huginn", {TOOL: Tool("Search the knowledge base; each result line says how "
                                                     "relevant it is, with retry hints when nothing matches.",
                                                     schema, search_knowledge)})
