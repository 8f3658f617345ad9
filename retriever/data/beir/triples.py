"""``triples.jsonl``: knowledge-graph triples and entity aliases per document."""

from __future__ import annotations

from collections.abc import Container
from pathlib import Path
from typing import Any

from searchtrace.errors import DataError
from searchtrace.limits import MAX_TRIPLES_LINE_BYTES
from searchtrace.retriever.data.beir._fields import take_id, take_object
from searchtrace.retriever.data.beir._lines import json_objects
from searchtrace.retriever.types import Triple

__all__ = ["load_triples"]


def load_triples(
    path: str | Path, known_ids: Container[str] | None = None
) -> tuple[list[Triple], dict[str, tuple[str, ...]]]:
    """Read ``triples.jsonl`` lines ``{"_id", "triples", "entities"?, "aliases"?}``.

    Every triple must be a list of 3 non-empty strings. The shared MuSiQue
    triples have no irregular ones (its builder dropped them upstream), so
    there is no lenient mode.

    Args:
        path: the file.
        known_ids: corpus ids; when given, an ``_id`` outside it is an error.

    Returns:
        The triples (each carrying its ``_id`` as ``doc_id``) and the aliases
        of all lines merged, ``{name: (alias, ...)}`` in first-seen order.

    Raises:
        DataError: bad JSON, a missing, duplicate or unknown ``_id``, a
            malformed triple (the message gives its index) or alias map.
    """
    path = Path(path)
    seen: dict[str, int] = {}
    triples: list[Triple] = []
    aliases: dict[str, dict[str, None]] = {}
    for number, obj in json_objects(path, MAX_TRIPLES_LINE_BYTES):
        doc_id = take_id(path, number, obj, seen)
        if known_ids is not None and doc_id not in known_ids:
            raise DataError(str(path), number, f"_id {doc_id!r} is not in the corpus")
        triples.extend(_take_triples(path, number, obj, doc_id))
        _merge_aliases(path, number, obj, aliases)
    return triples, {name: tuple(names) for name, names in aliases.items()}


def _take_triples(path: Path, number: int, obj: dict[str, Any], doc_id: str) -> list[Triple]:
    raw = obj.get("triples")
    if type(raw) is not list:
        raise DataError(str(path), number, "'triples' must be a list of [subject, relation, object]")
    triples = []
    for index, item in enumerate(raw):
        if type(item) is not list or len(item) != 3 or not all(type(s) is str and s.strip() for s in item):
            raise DataError(str(path), number, f"triples[{index}] must be 3 non-empty strings, got {item!r}")
        triples.append(Triple(item[0], item[1], item[2], doc_id))
    return triples


def _merge_aliases(path: Path, number: int, obj: dict[str, Any], into: dict[str, dict[str, None]]) -> None:
    """Add the line's ``aliases`` to ``into`` (name -> ordered set of aliases)."""
    for name, names in take_object(path, number, obj, "aliases").items():
        if not isinstance(names, list) or not all(isinstance(n, str) and n.strip() for n in names):
            raise DataError(str(path), number, f"aliases[{name!r}] must be a list of non-empty strings")
        into.setdefault(name, {}).update(dict.fromkeys(names))
