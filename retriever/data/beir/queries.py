"""``queries.jsonl``: the :class:`Query` record and its loader."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from searchtrace.errors import DataError
from searchtrace.limits import MAX_QUERY_LINE_BYTES
from searchtrace.retriever.data.beir._fields import take_id, take_object, take_str
from searchtrace.retriever.data.beir._lines import json_objects

__all__ = ["Query", "load_queries"]


@dataclass(frozen=True)
class Query:
    """One query of ``queries.jsonl``; ``metadata`` is a read-only mapping."""

    id: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))

    @property
    def category(self) -> str:
        """The query's ``metadata["category"]``, or ``""``."""
        return self.metadata.get("category", "")


def load_queries(path: str | Path) -> list[Query]:
    """Read ``queries.jsonl`` lines ``{"_id", "text", "metadata"?}``.

    Raises:
        DataError: bad JSON, a missing or duplicate ``_id``, empty or
            non-string ``text``, non-object ``metadata``, non-string
            ``metadata.category``, or an empty file.
    """
    path = Path(path)
    seen: dict[str, int] = {}
    queries: list[Query] = []
    for number, obj in json_objects(path, MAX_QUERY_LINE_BYTES):
        query_id = take_id(path, number, obj, seen)
        text = take_str(path, number, obj, "text", None)
        if not text.strip():
            raise DataError(str(path), number, "empty query 'text'")
        meta = take_object(path, number, obj, "metadata")
        if not isinstance(meta.get("category", ""), str):
            raise DataError(str(path), number, "'metadata.category' must be a string")
        queries.append(Query(query_id, text, meta))
    return queries
