"""Concept-RAG's catalogue over an open index: the graph's entities are its concepts, the collections its
categories, each document its ``source`` (known by its id: one chunk per document in this index).

Built once per served dataset from the graph store's contract (``document_entities``, ``match_entities``,
``neighbourhood``) and the documents' stored payloads: a lookup table, no retrieval.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from searchtrace.retriever.graph import GraphStore, normalize_name

SUMMARY_CHARS = 300
"""A document's summary: its text up to this many characters (the corpus has no summaries)."""
RELATED_LIMIT = 200
"""Triples read around one concept to find its related concepts."""


@dataclass(frozen=True, slots=True)
class Concept:
    """A graph entity: its id (its place in the sorted keys), key, display name, aliases and documents."""

    id: int
    key: str
    name: str
    aliases: tuple[str, ...]
    doc_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Category:
    """A collection: its id (its place in the sorted names), name and documents."""

    id: int
    name: str
    doc_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SourceDoc:
    """A document as Concept-RAG knows a source: id (its path), title, text, category, year, concepts."""

    id: str
    title: str
    text: str
    collection: str
    timestamp: str
    concept_ids: tuple[int, ...]

    @property
    def summary(self) -> str:
        return self.text[:SUMMARY_CHARS]

    @property
    def year(self) -> str:
        return self.timestamp[:4]

    @property
    def content(self) -> str:
        return f"{self.title}\n{self.text}" if self.title else self.text

    @property
    def hash(self) -> str:
        return hashlib.sha256(self.content.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Catalog:
    """The concepts, categories and sources of one dataset, and the lookups the tools need."""

    concepts: tuple[Concept, ...]
    categories: tuple[Category, ...]
    sources: Mapping[str, SourceDoc]
    graph: GraphStore | None
    by_key: Mapping[str, Concept] = field(default_factory=dict)
    by_name: Mapping[str, Concept] = field(default_factory=dict)

    def concept(self, name: str) -> Concept | None:
        """The concept named (or aliased) ``name``, compared as the graph compares names."""
        if self.graph is None:
            return None
        for entity in self.graph.match_entities([normalize_name(name)]):
            if entity.key in self.by_key:
                return self.by_key[entity.key]
        return None

    def related(self, concept: Concept) -> list[Concept]:
        """Concepts one relation away, nearest (the graph's order) first."""
        if self.graph is None:
            return []
        by_name = self.by_name
        out: dict[int, Concept] = {}
        for hit in self.graph.neighbourhood([concept.key], 1, RELATED_LIMIT):
            for name in (hit.triple.subject, hit.triple.object):
                other = by_name.get(name)
                if other is not None and other.id != concept.id:
                    out.setdefault(other.id, other)
        return list(out.values())

    def category(self, value: object) -> Category | None:
        """A category by name (any case) or id (a number, or its digits)."""
        text = str(value).strip()
        for c in self.categories:
            if c.name.casefold() == text.casefold() or (text.isdigit() and int(text) == c.id):
                return c
        return None

    def names(self, ids: Iterable[int]) -> list[str]:
        return [self.concepts[i].name for i in ids]


def build_catalog(graph: GraphStore | None, docs: Iterable[Mapping[str, Any]]) -> Catalog:
    """The catalogue of an index's documents (``Retriever.get_docs`` rows) and its graph (None: no concepts)."""
    rows = list(docs)
    ids = [str(d["id"]) for d in rows]
    entities = graph.document_entities(ids) if graph is not None else {}
    keys = sorted({k for found in entities.values() for k in found})
    named = {e.key: e for e in graph.match_entities(keys)} if graph is not None else {}
    of_key: dict[str, list[str]] = {k: [] for k in keys}
    for doc_id in ids:
        for k in entities.get(doc_id, ()):
            of_key[k].append(doc_id)
    concepts = tuple(Concept(i, k, named[k].name if k in named else k, named[k].aliases if k in named else (),
                             tuple(of_key[k])) for i, k in enumerate(keys))
    number = {k: i for i, k in enumerate(keys)}
    sources: dict[str, SourceDoc] = {}
    of_collection: dict[str, list[str]] = {}
    for d in rows:
        meta = d.get("metadata") or {}
        doc = SourceDoc(str(d["id"]), d.get("title", ""), d.get("text", ""), meta.get("collection", ""),
                        meta.get("timestamp", ""), tuple(number[k] for k in entities.get(str(d["id"]), ())))
        sources[doc.id] = doc
        if doc.collection:
            of_collection.setdefault(doc.collection, []).append(doc.id)
    categories = tuple(Category(i, name, tuple(of_collection[name])) for i, name in enumerate(sorted(of_collection)))
    return Catalog(concepts, categories, sources, graph, {c.key: c for c in concepts}, {c.name: c for c in concepts})
