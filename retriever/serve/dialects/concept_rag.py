"""Concept-RAG's ten MCP tools (``../shared/seeds/004_*``, schema v7) at ``/mcp/concept-rag``, and over stdio
beside ours (its seed is a stdio server: ``dialects.STDIO``).

Each answer is one text block holding JSON (an array, or an object), scores as strings with three decimals,
documents known by ``source`` (our document id: one chunk per document in this index). The graph's entities
are the concepts and the collections the categories (:mod:`.concept_catalog`). The search tools are our
search, asked as the seed's limits say: ``broad_chunks_search`` 30 results and ``catalog_search`` 10, each cut
at the first relevance drop above :data:`GAP_CUTOFF` (the seed cuts at its score gap), the relation hits among
them left out (facts, not chunks); ``chunks_search`` 5 within one source and ``concept_search`` the sources
naming the concept, in fast mode (passages only, uncut). The search tools search without relation hits
(``Speaker.passages``: the facts stay in ``kg``), so their lists are the in-process eval's heads. Unknown arguments are ignored, as the seed's server
does; a missing or mistyped one is a ``VALIDATION_ERROR`` naming it. Errors follow the seed's schema
(:func:`error_payload`), a tool's unexpected failure a ``SEARCH_ERROR``. The first served dataset answers;
each call is traced with ``concept-rag`` as the source.
"""

from __future__ import annotations

import asyncio
import enum
import json
import threading
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from searchtrace.errors import ErrorCode, NotFoundError, SearchFailed, SearchtraceError, ValidationError
from searchtrace.retriever.request import MAX_TOP_K
from searchtrace.retriever.response import SearchResponse
from searchtrace.retriever.serve.dialects import concept_answers as answers
from searchtrace.retriever.serve.dialects.concept_catalog import Catalog, build_catalog
from searchtrace.retriever.serve.dialects.speaker import Speaker, Tool, ToolAnswer

NAME = "concept-rag"
PATH = "/mcp/concept-rag"
GAP_CUTOFF = 0.2
"""The relevance drop at which a search tool's list ends (our request's ``gap_cutoff``)."""
LIMITS = {"broad_chunks_search": 30, "catalog_search": 10, "chunks_search": 5}
"""The most entries each search tool answers (the seed: typically 1-30, typically 1-10, 5 max)."""
QUERY_FIELD = {"broad_chunks_search": "text", "catalog_search": "text", "chunks_search": "text"}


class Code(str, enum.Enum):
    """The seed's error codes (two of them ours as well, named through :class:`ErrorCode`)."""

    VALIDATION_ERROR = ErrorCode.VALIDATION_ERROR.value
    RECORD_NOT_FOUND = "RECORD_NOT_FOUND"
    CONCEPT_NOT_FOUND = "CONCEPT_NOT_FOUND"
    DATABASE_ERROR = "DATABASE_ERROR"
    SEARCH_ERROR = ErrorCode.SEARCH_ERROR.value


class ConceptNotFound(NotFoundError):
    """A concept no entity of the graph is named or aliased by (``CONCEPT_NOT_FOUND``)."""


def error_code(exc: SearchtraceError) -> Code:
    """The seed's code for one of our errors (by its class: the most specific first)."""
    if isinstance(exc, ConceptNotFound):
        return Code.CONCEPT_NOT_FOUND
    return {ErrorCode.VALIDATION_ERROR: Code.VALIDATION_ERROR, ErrorCode.NOT_FOUND: Code.RECORD_NOT_FOUND,
            ErrorCode.BACKEND_UNAVAILABLE: Code.DATABASE_ERROR}.get(exc.code, Code.SEARCH_ERROR)


def error_payload(exc: SearchtraceError, tool: str) -> dict[str, Any]:
    """The seed's error object (its wire, written here once): code, message, field, type, context (the tool,
    our own code), and a timestamp."""
    return {"error": {"code": error_code(exc).value, "message": exc.message, "field": exc.field or "",
                      "type": type(exc).__name__, "context": {"tool": tool, "searchtraceCode": exc.code.value}},
            "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z")}


def _text(payload: Any) -> ToolAnswer:
    """An answer as the seed gives it: one text block (JSON, or markdown), no structured content."""
    return ToolAnswer(None, payload if isinstance(payload, str) else json.dumps(payload, indent=2))


# -- arguments: checked here, each failure naming its field ---------------------------------------------------


def _string(args: dict[str, Any], name: str, required: bool = True) -> str | None:
    value = args.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{name}: expected a non-empty string, got {value!r:.60}", field=name)
    return value


def _strings(args: dict[str, Any], name: str) -> list[str]:
    value = args.get(name)
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(i, str) and i.strip() for i in items):
        raise ValidationError(f"{name}: expected a string or a non-empty list of strings, got {value!r:.60}",
                              field=name)
    return items


def _flag(args: dict[str, Any], name: str, default: bool) -> bool:
    value = args.get(name, default)
    if not isinstance(value, bool):
        raise ValidationError(f"{name}: expected true or false, got {value!r:.60}", field=name)
    return value


def _count(args: dict[str, Any], name: str, default: int) -> int:
    value = args.get(name, default)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValidationError(f"{name}: expected a whole number of 1 or more, got {value!r:.60}", field=name)
    return value


def _choice(args: dict[str, Any], name: str, allowed: tuple[str, ...]) -> str:
    value = args.get(name, allowed[0])
    if value not in allowed:
        raise ValidationError(f"{name}: expected one of {', '.join(allowed)}, got {value!r:.60}", field=name)
    return str(value)


# -- the tools ---------------------------------------------------------------------------------------------------


class ConceptRag:
    """The tools over one speaker; the catalogue of the first dataset built on first use."""

    def __init__(self, speaker: Speaker) -> None:
        self.speaker = speaker
        self._catalog: Catalog | None = None
        self._lock = threading.Lock()

    async def catalog(self) -> Catalog:
        if self._catalog is None:
            served = self.speaker.service.served(None)
            main = served.main

            def build() -> Catalog:
                with self._lock:
                    if self._catalog is None:
                        ids = [str(i) for i in main.index.doc_ids]
                        self._catalog = build_catalog(main.index.graph, main.get_docs(ids))
                    return self._catalog

            # once, off the event loop and outside the searches' time limit (a large corpus takes longer)
            return await asyncio.to_thread(build)
        return self._catalog

    async def search(self, tool: str, query: str, top_k: int, doc_ids: list[str] | None = None,
                     chunks_only: bool = False) -> SearchResponse:
        """Our search, passages only (no relation hit takes a place); ``chunks_only``: in fast mode and uncut
        (the caller asked for each document it names), else cut at :data:`GAP_CUTOFF`."""
        body: dict[str, Any] = {"query": query}
        if chunks_only:
            body["mode"] = "fast"
        else:
            body["gap_cutoff"] = GAP_CUTOFF
        if doc_ids is not None:
            body["doc_ids"] = doc_ids
        try:
            return (await self.speaker.passages(body, top_k)).response
        except ValidationError as exc:  # our field names, said in the tool's
            if exc.field == "query" and tool in QUERY_FIELD:
                raise ValidationError(exc.message.replace("query", QUERY_FIELD[tool], 1),
                                      field=QUERY_FIELD[tool]) from None
            raise

    async def broad_chunks_search(self, args: dict[str, Any]) -> Any:
        response = await self.search("broad_chunks_search", str(_string(args, "text")), LIMITS["broad_chunks_search"])
        return answers.chunks(response)

    async def catalog_search(self, args: dict[str, Any]) -> Any:
        response = await self.search("catalog_search", str(_string(args, "text")), LIMITS["catalog_search"])
        return answers.documents(response, await self.catalog())

    async def chunks_search(self, args: dict[str, Any]) -> Any:
        text, source = str(_string(args, "text")), str(_string(args, "source"))
        catalog = await self.catalog()
        if source not in catalog.sources:
            raise NotFoundError(f"source: no document {source!r}", field="source")
        response = await self.search("chunks_search", text, LIMITS["chunks_search"], [source], chunks_only=True)
        return answers.source_chunks(response, catalog)

    async def concept_search(self, args: dict[str, Any]) -> Any:
        name, source_filter = str(_string(args, "concept")), _string(args, "source_filter", required=False)
        catalog = await self.catalog()
        concept = catalog.concept(name)
        if concept is None:
            raise ConceptNotFound(f"concept: no concept {name!r}", field="concept")
        related = catalog.related(concept)
        primary = [d for d in concept.doc_ids if answers.passes(d, source_filter)]
        ranked = primary[:MAX_TOP_K]  # the chunks ranked: as many as one search answers
        response = (await self.search("concept_search", concept.name, len(ranked), ranked, chunks_only=True)
                    if ranked else None)
        return answers.concept(concept, related, primary, response, catalog, source_filter)

    async def extract_concepts(self, args: dict[str, Any]) -> Any:
        query = str(_string(args, "document_query"))
        form = _choice(args, "format", ("json", "markdown"))
        include_summary = _flag(args, "include_summary", True)
        catalog = await self.catalog()
        doc = answers.named_document(query, catalog)
        if doc is None:
            found = (await self.search("catalog_search", query, 1)).chunks
            doc = catalog.sources.get(found[0].id) if found else None
        if doc is None:
            raise NotFoundError(f"document_query: no document matches {query!r}", field="document_query")
        return answers.extraction(doc, catalog, include_summary, form)

    async def source_concepts(self, args: dict[str, Any]) -> Any:
        names = _strings(args, "concept")
        return answers.union_sources(names, await self.catalog(), _flag(args, "include_metadata", True))

    async def concept_sources(self, args: dict[str, Any]) -> Any:
        names = _strings(args, "concept")
        return answers.per_concept_sources(names, await self.catalog(), _flag(args, "include_metadata", True))

    async def list_categories(self, args: dict[str, Any]) -> Any:
        sort = _choice(args, "sortBy", ("popularity", "name"))
        limit, search = _count(args, "limit", 50), _string(args, "search", required=False)
        return answers.categories(await self.catalog(), sort, limit, search)

    async def category_search(self, args: dict[str, Any]) -> Any:
        catalog = await self.catalog()
        category = catalog.category(_category_arg(args))
        if category is None:
            raise NotFoundError(f"category: no category {args['category']!r}; categories: "
                                f"{', '.join(c.name for c in catalog.categories)}", field="category")
        return answers.category_documents(category, catalog, _flag(args, "includeChildren", False))

    async def list_concepts_in_category(self, args: dict[str, Any]) -> Any:
        catalog = await self.catalog()
        category = catalog.category(_category_arg(args))
        sort = _choice(args, "sortBy", ("documentCount", "name"))
        limit = _count(args, "limit", 50)
        if category is None:
            raise NotFoundError(f"category: no category {args['category']!r}; categories: "
                                f"{', '.join(c.name for c in catalog.categories)}", field="category")
        return answers.category_concepts(category, catalog, sort, limit)


def _category_arg(args: dict[str, Any]) -> str:
    value = args.get("category")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(int(value))
    return str(_string(args, "category"))


TOOL_NAMES = ("concept_search", "source_concepts", "concept_sources", "extract_concepts", "list_categories",
              "category_search", "list_concepts_in_category", "catalog_search", "chunks_search",
              "broad_chunks_search")
"""The seed's ten tools, in its order of concept analysis, categories, then search."""


def _tool(name: str, call: Callable[[dict[str, Any]], Awaitable[Any]]) -> Tool:
    """One seed tool: its schema and description, its answer one text block, its errors in the seed's schema."""

    async def handler(args: dict[str, Any]) -> ToolAnswer:
        try:
            return _text(await call(args))
        except SearchtraceError:
            raise
        except Exception as exc:  # recorded on the server span; answered in the seed's schema
            raise SearchFailed(f"{name} failed: {type(exc).__name__}: {exc}") from exc

    return Tool(answers.DESCRIPTIONS[name], answers.SCHEMAS[name], handler,
                refuse=lambda exc: _text(error_payload(exc, name)))


def mount(app: Any, speaker: Speaker) -> None:
    """The ten tools at ``/mcp/concept-rag`` (``app`` None: recorded for the stdio server)."""
    impl = ConceptRag(speaker)
    speaker.mcp(app, PATH, NAME, {name: _tool(name, getattr(impl, name)) for name in TOOL_NAMES})
