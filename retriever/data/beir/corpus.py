"""``corpus.jsonl``: one document per line."""

from __future__ import annotations

import functools
from datetime import datetime
from pathlib import Path
from typing import Any

from searchtrace.errors import DataError
from searchtrace.limits import MAX_CORPUS_LINE_BYTES
from searchtrace.retriever.data.beir._fields import take_id, take_object, take_str
from searchtrace.retriever.data.beir._lines import json_objects
from searchtrace.retriever.types import Document

__all__ = ["load_corpus"]

_DOC_FIELDS = ("collection", "tags", "language", "url", "timestamp")
_is_str = functools.partial(type.__instancecheck__, str)


def load_corpus(path: str | Path) -> list[Document]:
    """Read ``corpus.jsonl`` lines ``{"_id", "title"?, "text", "metadata"?}``.

    Optional ``collection``, ``tags``, ``language``, ``url`` and ``timestamp``
    may sit in ``metadata`` or at the top level of the line.

    Raises:
        DataError: bad JSON, a missing or duplicate ``_id``, a non-string
            ``title``/``text``, a bad metadata value, or an empty file.
    """
    path = Path(path)
    seen: dict[str, int] = {}
    docs: list[Document] = []
    for number, obj in json_objects(path, MAX_CORPUS_LINE_BYTES):
        doc_id = take_id(path, number, obj, seen)
        title = take_str(path, number, obj, "title", "")
        text = take_str(path, number, obj, "text", None)
        docs.append(Document(doc_id, title, text, **_doc_fields(path, number, obj)))
    return docs


def _doc_fields(path: Path, number: int, obj: dict[str, Any]) -> dict[str, Any]:
    """Document fields from ``metadata`` or the top level (they must agree)."""
    meta = take_object(path, number, obj, "metadata")
    fields: dict[str, Any] = {}
    for key in _DOC_FIELDS:
        in_meta, in_obj = key in meta, key in obj
        if not (in_meta or in_obj):
            continue
        value = meta[key] if in_meta else obj[key]
        if in_meta and in_obj and obj[key] != value:
            raise DataError(str(path), number, f"'{key}' differs between top level and metadata")
        fields[key] = _doc_field(path, number, key, value)
    _check_timestamp(path, number, fields.get("timestamp"))
    return fields


def _doc_field(path: Path, number: int, key: str, value: Any) -> Any:
    """``value`` checked for ``key``: ``tags`` a list of strings (as a tuple), the rest strings."""
    if key == "tags":
        if type(value) is not list or not all(map(_is_str, value)):
            raise DataError(str(path), number, "'tags' must be a list of strings")
        return tuple(value)
    if type(value) is not str:
        raise DataError(str(path), number, f"'{key}' must be a string, got {type(value).__name__}")
    return value


def _check_timestamp(path: Path, number: int, stamp: str | None) -> None:
    if stamp:
        try:
            datetime.fromisoformat(stamp)
        except ValueError:
            raise DataError(str(path), number, f"'timestamp' is not ISO 8601: {stamp!r}") from None
