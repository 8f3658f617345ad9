"""Rewrite stage: normalize the query, detect graph entities, add their names.

Entities are detected by exact lookup of every word n-gram of the normalized
query against the graph's normalized names and aliases; a match contained in a
longer match is dropped. ``rewrite_terms`` are the canonical names and aliases
of detected entities that the query does not already contain; in graph mode
they extend the keyword query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from searchtrace.retriever.graph.base import GraphStore
from searchtrace.retriever.graph.normalize import candidate_spans, normalize_name
from searchtrace.retriever.types import Entity

_SPACES = re.compile(r"\s+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
MAX_REWRITE_TERMS = 8


@dataclass(frozen=True)
class Rewrite:
    """What the rewrite stage produced."""

    query: str
    entities: tuple[Entity, ...] = ()
    rewrite_terms: tuple[str, ...] = ()

    @property
    def keyword_query(self) -> str:
        return " ".join((self.query, *self.rewrite_terms)) if self.rewrite_terms else self.query


def normalize_query(text: str) -> str:
    """Drop control characters and collapse white space."""
    return _SPACES.sub(" ", _CONTROL.sub(" ", text)).strip()


def _outermost(entities: list[Entity]) -> list[Entity]:
    """Drop entities whose key is a word-level part of another detected key."""
    keys = [f" {e.key} " for e in entities]
    kept = []
    for i, e in enumerate(entities):
        inner = any(j != i and keys[i] in keys[j] and keys[i] != keys[j] for j in range(len(keys)))
        if not inner:
            kept.append(e)
    return kept


def detect_entities(query: str, graph: GraphStore) -> list[Entity]:
    spans = [s for s in candidate_spans(query) if len(s) >= 3]
    if not spans:
        return []
    found = {e.key: e for e in graph.match_entities(spans)}
    return sorted(_outermost(list(found.values())), key=lambda e: e.key)


def rewrite_terms(query: str, entities: list[Entity]) -> list[str]:
    present = f" {normalize_name(query)} "
    terms: list[str] = []
    for e in entities:
        for name in (e.name, *e.aliases):
            norm = normalize_name(name)
            if norm and f" {norm} " not in present and name not in terms:
                terms.append(name)
    return terms[:MAX_REWRITE_TERMS]


def rewrite(query: str, graph: GraphStore | None) -> Rewrite:
    """Normalize; with a graph, detect entities and compute rewrite terms."""
    text = normalize_query(query)
    if graph is None:
        return Rewrite(text)
    entities = detect_entities(text, graph)
    return Rewrite(text, tuple(entities), tuple(rewrite_terms(text, entities)))
