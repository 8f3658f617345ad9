"""The contract every graph backend meets (embedded, Neo4j over Bolt).

The same contract test suite (``tests/graph/test_contract.py``) runs on every backend.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Protocol, runtime_checkable

from searchtrace.retriever.types import Entity, GraphHit, Triple


@runtime_checkable
class GraphStore(Protocol):
    """A knowledge graph of subject-relation-object triples.

    Entities are keyed by ``retriever.graph.normalize.normalize_name``; a triple's
    relation edge keeps the id of the document it came from.

    A backend may also offer ``reach(entity_keys, depth, limit) -> reach.Reach``:
    ``neighbourhood``'s hits with integer columns the graph stage scores as
    arrays (``MemoryGraph`` does). It is optional: without it the stage derives
    the columns from the hits (``reach.reach_from_hits``), with the same result.
    """

    def connect(self) -> None:
        """Open connections / load state. Constructors do no I/O."""

    def close(self) -> None: ...

    def clear(self) -> None:
        """Remove every entity and relation this store owns."""

    def load(self, triples: Iterable[Triple], aliases: Mapping[str, Iterable[str]] | None = None) -> int:
        """Add triples (batched); ``aliases`` maps an entity name to extra names. Returns triples written."""

    def match_entities(self, names: Iterable[str]) -> list[Entity]:
        """Entities whose normalized name or an alias equals one of ``names`` (already normalized)."""

    def neighbourhood(self, entity_keys: Iterable[str], depth: int, limit: int) -> list[GraphHit]:
        """Triples reachable from the entities within ``depth`` hops (1..3), nearest first, at most ``limit``."""

    def document_entities(self, doc_ids: Iterable[str]) -> dict[str, list[str]]:
        """Keys of the entities each document's triples mention, sorted (``[]`` for an unknown id)."""

    def degree(self, entity_keys: Iterable[str]) -> dict[str, int]:
        """Number of relations touching each entity (0 for unknown keys)."""

    def stats(self) -> dict[str, int]:
        """``{"entities": n, "relations": m}``."""
