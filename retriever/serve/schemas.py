"""JSON schemas of the served requests (OpenAPI and the MCP tools' input schemas), limits included."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from searchtrace.retriever.request import SearchRequest
from searchtrace.retriever.serve.config import MAX_IDS


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with every ``#/$defs/`` reference replaced by its definition (clients read it whole)."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return walk(copy.deepcopy(defs[ref.rsplit("/", 1)[1]]))
            return {k: walk(x) for k, x in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(x) for x in node]
        return node

    return walk(schema)


def _dataset(names: Sequence[str]) -> dict[str, Any]:
    return {"type": "string", "enum": list(names), "description": f"dataset to search (default {names[0]})"}


def search_schema(datasets: Sequence[str], *, with_fusion: bool) -> dict[str, Any]:
    """The search request's schema (top_k <= 50, candidates <= 500, query <= 8192 bytes, ...) plus ``dataset``."""
    schema = inline_refs(SearchRequest.model_json_schema())
    schema.pop("title", None)
    props = schema["properties"]
    props["query"].update(maxLength=8192, minLength=1, description="what to search for (at most 8192 UTF-8 bytes)")
    props["dataset"] = _dataset(datasets)
    if with_fusion:
        props["fusion"] = {"type": "string", "enum": ["fuse", "keyword_then_dense"], "default": "fuse",
                           "description": "fuse every stage's list, or rank keyword candidates by dense similarity"}
    schema["additionalProperties"] = False
    return schema


def ids_schema(datasets: Sequence[str]) -> dict[str, Any]:
    """``{"ids": [...], "dataset": ...}``: 1 to MAX_IDS ids."""
    return {"type": "object", "additionalProperties": False, "required": ["ids"],
            "properties": {"ids": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_IDS,
                                   "description": f"document ids (at most {MAX_IDS})"},
                           "dataset": _dataset(datasets)}}
