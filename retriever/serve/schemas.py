"""JSON schemas of the served requests (OpenAPI and the MCP tools' input schemas), limits included."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from searchtrace.retriever.request import request_schema
from searchtrace.retriever.serve.config import MAX_IDS
from searchtrace.retriever.types import FusionMethod


def _dataset(names: Sequence[str]) -> dict[str, Any]:
    return {"type": "string", "enum": list(names), "description": f"dataset to search (default {names[0]})"}


def search_schema(datasets: Sequence[str], *, with_fusion: bool,
                  fusion_default: FusionMethod = FusionMethod.DBSF) -> dict[str, Any]:
    """The search request's schema plus ``dataset``, and for the hybrid search ``fusion`` (the method names the
    CLI's ``--fusion`` takes).

    Its limits are ``retriever.request``'s: top_k <= 500 (``MAX_TOP_K``, passages and facts together),
    candidates <= 500 (``MAX_CANDIDATES``), query <= 8192 characters (``MAX_QUERY_CHARS``, code points as
    JSON Schema counts them, not bytes), lists <= 1000 items (``MAX_LIST``), depth <= 3 (``MAX_DEPTH``).
    """
    schema = request_schema()
    props = schema["properties"]
    props["dataset"] = _dataset(datasets)
    if with_fusion:
        props["fusion"] = {"type": "string", "enum": [m.value for m in FusionMethod], "default": fusion_default.value,
                           "description": "how the stages' lists are combined: dbsf, zscore and weighted sum "
                                          "normalized scores, rrf sums reciprocal ranks, keyword_then_dense ranks "
                                          "the keyword candidates by dense similarity (default: the server's)"}
    return schema


def search_fields(*, with_fusion: bool) -> tuple[str, ...]:
    """The fields :func:`search_schema` allows, in its order: what an unknown-field error lists."""
    return tuple(search_schema(["dataset"], with_fusion=with_fusion)["properties"])


def ids_fields() -> tuple[str, ...]:
    """The fields :func:`ids_schema` allows."""
    return tuple(ids_schema(["dataset"])["properties"])


TRACE_ID_FIELD = "traceId"
"""The fetch requests' field (MCP argument, HTTP query parameter) naming the search a fetch follows."""

TRACE_ID_SCHEMA = {"type": "string", "pattern": "^[0-9a-f]{32}$",
                   "description": "the traceId of the search whose results these ids are (optional): the fetch "
                                  "is recorded as following that search"}
"""A fetch's optional ``traceId``: the search it follows (32 lowercase hex, as a search answers it)."""


def ids_schema(datasets: Sequence[str]) -> dict[str, Any]:
    """``{"ids": [...], "dataset": ..., "traceId": ...}``: 1 to MAX_IDS ids, the search followed optional."""
    return {"type": "object", "additionalProperties": False, "required": ["ids"],
            "properties": {"ids": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_IDS,
                                   "description": f"document ids (at most {MAX_IDS})"},
                           "dataset": _dataset(datasets), TRACE_ID_FIELD: dict(TRACE_ID_SCHEMA)}}
