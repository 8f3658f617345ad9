"""JSON schemas of the served requests (OpenAPI and the MCP tools' input schemas), limits included."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from searchtrace.retriever.request import request_schema
from searchtrace.retriever.serve.config import MAX_IDS


def _dataset(names: Sequence[str]) -> dict[str, Any]:
    return {"type": "string", "enum": list(names), "description": f"dataset to search (default {names[0]})"}


def search_schema(datasets: Sequence[str], *, with_fusion: bool) -> dict[str, Any]:
    """The search request's schema (top_k <= 50, candidates <= 500, query <= 8192 bytes, ...) plus ``dataset``."""
    schema = request_schema()
    props = schema["properties"]
    props["dataset"] = _dataset(datasets)
    if with_fusion:
        props["fusion"] = {"type": "string", "enum": ["fuse", "keyword_then_dense"], "default": "fuse",
                           "description": "fuse every stage's list, or rank keyword candidates by dense similarity"}
    return schema


def ids_schema(datasets: Sequence[str]) -> dict[str, Any]:
    """``{"ids": [...], "dataset": ...}``: 1 to MAX_IDS ids."""
    return {"type": "object", "additionalProperties": False, "required": ["ids"],
            "properties": {"ids": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_IDS,
                                   "description": f"document ids (at most {MAX_IDS})"},
                           "dataset": _dataset(datasets)}}
