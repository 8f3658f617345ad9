"""ProxySQL's RAG tools at ``/mcp/rag``, behind their Bearer token (seed ``002``).

``rag.search_fts`` (BM25 alone; ``k``, ``offset``), ``rag.search_vector`` (dense alone; ``query_text``, ``k``),
``rag.search_hybrid`` (``mode`` ``fuse``: reciprocal rank fusion, or ``fts_then_vec``: the keyword candidates
ranked by dense similarity), ``rag.get_chunks``, ``rag.get_docs`` and ``rag.admin.stats``; ``rag.fetch_from_source``
answers "not supported" (an index has no source database to refetch from).

As ProxySQL does, a ``k`` outside 1..50 is the default 10 and a ``candidates`` value outside 1..500 the default
50 (``validate_k``, ``validate_candidates``); a query over 8192 bytes is refused. What is clamped or ignored is
said in the answer's ``stats.notes``. Our index holds one chunk per document: a chunk's id is its document's.
``truncated`` is always false: at most 500 rows, an answer stays far under ProxySQL's 5 MB ``response_max_bytes``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from searchtrace.errors import SearchFailed, ValidationError
from searchtrace.retriever.request import MAX_TOP_K
from searchtrace.retriever.response import Result
from searchtrace.retriever.serve.dialects.speaker import Passages, Speaker, Tool, ToolAnswer, json_answer
from searchtrace.retriever.serve.service import Variant
from searchtrace.retriever.types import FusionMethod

PATH = "/mcp/rag"
K_MAX = 50
K_DEFAULT = 10
CANDIDATES_MAX = 500
CANDIDATES_DEFAULT = 50
QUERY_MAX_BYTES = 8192
FILTERS = ("source_ids", "source_names", "doc_ids", "min_score", "post_type_ids", "tags_any", "tags_all",
           "created_after", "created_before")
"""The filters ProxySQL takes (``source_ids`` and ``post_type_ids`` have no counterpart here: ignored)."""
HYBRID_MODES = {"fuse": FusionMethod.RRF, "fts_then_vec": FusionMethod.KEYWORD_THEN_DENSE}


class Notes(list[str]):
    """What the answer's ``stats.notes`` says was clamped or ignored."""


def validate_k(value: object, notes: Notes, name: str = "k") -> int:
    """``value`` when an integer in 1..K_MAX, else the default 10 (noted), as ProxySQL's ``validate_k``."""
    if value is None:
        return K_DEFAULT
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= K_MAX:
        return value
    notes.append(f"{name} {value!r:.40} is outside 1..{K_MAX}: {K_DEFAULT} used")
    return K_DEFAULT


def validate_candidates(value: object, notes: Notes, name: str) -> int:
    """``value`` when an integer in 1..CANDIDATES_MAX, else the default 50 (noted), as ``validate_candidates``."""
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= CANDIDATES_MAX:
        return value
    notes.append(f"{name} {value!r:.40} is outside 1..{CANDIDATES_MAX}: {CANDIDATES_DEFAULT} used")
    return CANDIDATES_DEFAULT


def _query(args: Mapping[str, Any], name: str) -> str:
    query = args.get(name)
    if not isinstance(query, str) or not query:
        raise ValidationError(f"{name}: required, a non-empty string", field=name)
    if len(query.encode("utf-8")) > QUERY_MAX_BYTES:
        raise ValidationError(f"{name} exceeds query_max_bytes ({QUERY_MAX_BYTES})", field=name)
    return query


def filters_of(value: object, notes: Notes) -> dict[str, Any]:
    """Our request's scope fields from ProxySQL's ``filters``."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValidationError("filters must be an object", field="filters")
    out: dict[str, Any] = {}
    for key, x in value.items():
        if key in ("doc_ids", "tags_any", "tags_all", "created_after", "created_before"):
            out[key] = x
        elif key == "min_score":
            out["min_relevance"] = x
        elif key == "source_names":
            names = x if isinstance(x, list) else [x]
            if len(names) == 1:
                out["collection"] = names[0]  # a source is one of our collections
            elif names:
                notes.append("filters.source_names: one collection per search here; ignored")
        elif key in FILTERS:
            notes.append(f"filters.{key}: no counterpart in this index; ignored")
        else:
            notes.append(f"filters.{key}: not a ProxySQL filter; ignored")
    return out


def _return_options(value: object) -> dict[str, bool]:
    given = value if isinstance(value, Mapping) else {}
    return {"include_title": given.get("include_title", True) is not False,
            "include_metadata": given.get("include_metadata", True) is not False,
            "include_snippets": given.get("include_snippets", False) is True}


def row_of(r: Result, dataset: str, options: Mapping[str, bool]) -> dict[str, Any]:
    row: dict[str, Any] = {"chunk_id": r.id, "doc_id": r.id, "source_name": dataset, "score": r.score}
    if options["include_title"]:
        row["title"] = r.metadata.title
    if options["include_metadata"]:
        row["metadata"] = dict(r.metadata.to_json())
    if options["include_snippets"]:
        from searchtrace.retriever.serve import render

        row["snippet"] = render.snippet(r.content)
    return row


def answer_of(found: Passages, offset: int, dataset: str, options: Mapping[str, bool], stats: dict[str, Any]
              ) -> dict[str, Any]:
    page = found.passages[offset:]
    return {"results": [row_of(r, dataset, options) for r in page], "truncated": False,
            "stats": {**stats, "returned": len(page), "trace_id": found.response.trace_id}}


class Tools:
    """The seven tools over one speaker."""

    def __init__(self, speaker: Speaker) -> None:
        self.speaker = speaker
        self.dataset = next(iter(speaker.service.dataset_paths))

    async def _search(self, args: dict[str, Any], query_key: str, variant: Variant | None,
                      extra: Callable[[Notes], dict[str, Any]] | None = None, paged: bool = False) -> ToolAnswer:
        started = time.perf_counter()
        notes = Notes()
        query = _query(args, query_key)
        k = validate_k(args.get("k"), notes)
        offset = args.get("offset", 0) if paged else 0
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            notes.append(f"offset {offset!r:.40} is not a whole number >= 0: 0 used")
            offset = 0
        if offset + k > MAX_TOP_K:
            raise ValidationError(f"offset + k must be at most {MAX_TOP_K} (the deepest ranking served), got "
                                  f"{offset + k}", field="offset")
        request = {"query": query, **filters_of(args.get("filters"), notes), **(extra(notes) if extra else {})}
        for ignored in ("embedding", "query_embedding"):
            if ignored in args:
                notes.append(f"{ignored}: the query is embedded by this server's model; ignored")
        found = await self.speaker.passages(request, offset + k, variant, field="k")
        stats = {"k_requested": args.get("k", K_DEFAULT), "k": k, "offset": offset,
                 "ms": round((time.perf_counter() - started) * 1000, 3), "notes": list(notes)}
        return json_answer(answer_of(found, offset, self.dataset, _return_options(args.get("return")), stats))

    async def search_fts(self, args: dict[str, Any]) -> ToolAnswer:
        return await self._search(args, "query", Variant.KEYWORD, paged=True)

    async def search_vector(self, args: dict[str, Any]) -> ToolAnswer:
        return await self._search(args, "query_text", Variant.VECTOR)

    async def search_hybrid(self, args: dict[str, Any]) -> ToolAnswer:
        mode = args.get("mode", "fuse")
        if mode not in HYBRID_MODES:
            raise ValidationError(f"mode must be fuse or fts_then_vec, got {mode!r:.40}", field="mode")

        def extra(notes: Notes) -> dict[str, Any]:
            out: dict[str, Any] = {"fusion": HYBRID_MODES[mode].value}
            given = args.get(mode)
            params: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
            if mode == "fuse":
                sizes = [params[k] for k in ("fts_k", "vec_k") if k in params]
                if sizes:
                    out["candidates"] = validate_candidates(max(sizes, key=lambda x: x if isinstance(x, int) else 0),
                                                            notes, "fuse.fts_k/vec_k")
                for key in ("rrf_k0", "w_fts", "w_vec"):
                    if key in params:
                        notes.append(f"fuse.{key}: the server's fusion settings apply; ignored")
            else:
                if "candidates_k" in params:
                    out["candidates"] = validate_candidates(params["candidates_k"], notes,
                                                            "fts_then_vec.candidates_k")
                if "rerank_k" in params:
                    notes.append("fts_then_vec.rerank_k: every keyword candidate is ranked; ignored")
                if params.get("vec_metric", "cosine") != "cosine":
                    notes.append("fts_then_vec.vec_metric: cosine is the only metric; used")
            return out

        return await self._search(args, "query", None, extra)

    async def _fetch(self, args: dict[str, Any], key: str, chunks: bool) -> ToolAnswer:
        ids = args.get(key)
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise ValidationError(f"{key}: required, a list of id strings", field=key)
        options = _return_options(args.get("return"))
        found = await self.speaker.documents(ids, chunks=False)
        rows = []
        for d in found:
            row: dict[str, Any] = {"doc_id": d["id"], "source_name": self.dataset}
            if chunks:
                row = {"chunk_id": d["id"], **row, "chunk_index": 0}
            if options["include_title"]:
                row["title"] = d["title"]
            row["body"] = d["text"]
            if options["include_metadata"]:
                row["metadata"] = d["metadata"]
            rows.append(row)
        return json_answer({"chunks" if chunks else "docs": rows})

    async def get_chunks(self, args: dict[str, Any]) -> ToolAnswer:
        return await self._fetch(args, "chunk_ids", True)

    async def get_docs(self, args: dict[str, Any]) -> ToolAnswer:
        return await self._fetch(args, "doc_ids", False)

    async def fetch_from_source(self, args: dict[str, Any]) -> ToolAnswer:
        raise SearchFailed("rag.fetch_from_source is not supported: searchtrace serves an index, not the source "
                           "database it was built from; rag.get_docs returns the indexed documents",
                           field="name")

    async def admin_stats(self, args: dict[str, Any]) -> ToolAnswer:
        stats = await self.speaker.service.run(self.speaker.service.stats)
        sources = [{"source_name": name, "documents": d["documents"], "chunks": d["documents"],
                    "triples": d["triples"], "model": d["model"]} for name, d in stats["datasets"].items()]
        serve = self.speaker.service.serve
        return json_answer({"sources": sources, "searches_served": stats["searchesServed"],
                            "latency_ms": stats.get("latencyMs"),
                            "config": {"k_max": K_MAX, "candidates_max": CANDIDATES_MAX,
                                       "query_max_bytes": QUERY_MAX_BYTES, "timeout_ms": int(serve.timeout_s * 1000)}})


_OBJECT = {"type": "object"}
_IDS = {"type": "array", "items": {"type": "string"}}
_K = {"type": "integer", "default": K_DEFAULT, "maximum": K_MAX}


def _schema(required: str, **properties: Any) -> dict[str, Any]:
    return {"type": "object", "required": [required], "properties": properties}


def tools(speaker: Speaker) -> dict[str, Tool]:
    t = Tools(speaker)
    return {
        "rag.search_fts": Tool("Keyword search (BM25)", _schema(
            "query", query={"type": "string"}, k=_K, offset={"type": "integer", "default": 0}, filters=_OBJECT,
            **{"return": _OBJECT}), t.search_fts),
        "rag.search_vector": Tool("Semantic search (vector embeddings)", _schema(
            "query_text", query_text={"type": "string"}, k=_K, filters=_OBJECT, embedding=_OBJECT,
            query_embedding=_OBJECT, **{"return": _OBJECT}), t.search_vector),
        "rag.search_hybrid": Tool("Hybrid search: fuse (reciprocal rank fusion) or fts_then_vec", _schema(
            "query", query={"type": "string"}, k=_K, mode={"type": "string", "enum": list(HYBRID_MODES)},
            filters=_OBJECT, fuse=_OBJECT, fts_then_vec=_OBJECT), t.search_hybrid),
        "rag.get_chunks": Tool("Fetch chunks by chunk_id", _schema("chunk_ids", chunk_ids=_IDS,
                                                                   **{"return": _OBJECT}), t.get_chunks),
        "rag.get_docs": Tool("Fetch documents by doc_id", _schema("doc_ids", doc_ids=_IDS, **{"return": _OBJECT}),
                             t.get_docs),
        "rag.fetch_from_source": Tool("Not supported here: there is no source database to refetch from",
                                      _schema("doc_ids", doc_ids=_IDS, columns=_IDS, limits=_OBJECT),
                                      t.fetch_from_source),
        "rag.admin.stats": Tool("Operational statistics", {"type": "object", "properties": {}}, t.admin_stats),
    }


def mount(app: Any, speaker: Speaker) -> None:
    """The tools at ``/mcp/rag``, behind ``SEARCHTRACE_PROXYSQL_TOKEN``."""
    from searchtrace.errors import ConfigError

    token = speaker.service.serve.proxysql_token
    if not token:
        raise ConfigError("--dialect proxysql: its tools need a Bearer token; set SEARCHTRACE_PROXYSQL_TOKEN",
                          field="SEARCHTRACE_PROXYSQL_TOKEN")
    speaker.mcp(app, PATH, "proxysql", tools(speaker), token=token)
