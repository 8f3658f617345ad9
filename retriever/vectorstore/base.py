"""The contract of a vector store: Qdrant Edge in-process, or a Qdrant server.

Points are addressed by an integer id (the document's position in the index
manifest); the payload carries the document id and metadata. Each point has a
named dense vector ``dense`` (cosine) and a named sparse vector ``bm25``
(IDF modifier, Qdrant's own BM25 embedder). A store created with ``parts=True``
also gives each point a multivector ``parts``: one vector per part of the
passage (its title and sentences), compared by MaxSim (the best part's cosine),
with no HNSW graph of its own: it only rescores what the passage vectors found.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from searchtrace.errors import ValidationError

DENSE = "dense"
SPARSE = "bm25"
PARTS = "parts"


@dataclass(frozen=True, slots=True)
class Sparse:
    """A sparse vector, independent of the client library."""

    indices: tuple[int, ...]
    values: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class PointRow:
    """One point to write."""

    id: int
    dense: np.ndarray  # float32, unit norm
    sparse: Sparse
    payload: dict[str, Any]
    parts: np.ndarray | None = None  # float32 (n_parts x dim), unit rows; only in a store created with parts


@dataclass(frozen=True, slots=True)
class PayloadFilter:
    """Filters a store can push down (all optional; ``None`` = no constraint)."""

    collection: str | None = None
    tags_any: tuple[str, ...] | None = None
    tags_all: tuple[str, ...] | None = None
    doc_ids: tuple[str, ...] | None = None
    created_after: str | None = None
    created_before: str | None = None

    def is_empty(self) -> bool:
        return all(v is None for v in (self.collection, self.tags_any, self.tags_all,
                                       self.doc_ids, self.created_after, self.created_before))


@dataclass(frozen=True, slots=True)
class Hit:
    """A scored point: integer id, score."""

    id: int
    score: float


@runtime_checkable
class VectorStore(Protocol):
    def create(self, dim: int, parts: bool = False) -> None:
        """Create an empty collection/shard with the schema above (drops an existing one);
        ``parts`` adds the ``parts`` multivector."""

    def open(self) -> None:
        """Open an existing collection/shard."""

    def close(self) -> None: ...

    def upsert(self, rows: Sequence[PointRow]) -> None: ...

    def flush(self) -> None:
        """Make written points durable and searchable (builds/optimizes the index)."""

    def count(self) -> int: ...

    def search_dense(self, vectors: np.ndarray, limit: int, flt: PayloadFilter | None = None) -> list[list[Hit]]:
        """Nearest neighbours for a batch of query vectors (one engine call)."""

    def search_sparse(self, vectors: Sequence[Sparse], limit: int, flt: PayloadFilter | None = None) -> list[list[Hit]]:
        """BM25 search for a batch of sparse query vectors (one engine call)."""

    def search_hybrid(self, dense: np.ndarray, sparse: Sequence[Sparse], limit: int,
                      flt: PayloadFilter | None = None) -> tuple[list[list[Hit]], list[list[Hit]]]:
        """Dense and sparse searches for a batch of queries in one engine call."""

    def search_best_parts(self, vectors: np.ndarray, limit: int,
                          flt: PayloadFilter | None = None) -> list[list[Hit]]:
        """For each query vector, its ``limit`` nearest points by the passage vector, scored
        by their best part (MaxSim over ``parts``), best first (one engine call). Points
        without parts are left out."""

    def retrieve(self, ids: Sequence[int], with_vectors: bool = False) -> list[tuple[int, dict[str, Any], np.ndarray | None]]:
        """Points by id, in the order asked for; unknown ids are left out."""


def dense_rows(vectors: np.ndarray) -> list[list[float]]:
    """A batch of dense query vectors as float32 rows (lists, as the clients take them)."""
    rows = np.asarray(vectors, dtype=np.float32)
    if rows.ndim != 2:
        raise ValidationError(f"dense queries must be a 2-d array, got shape {rows.shape}", field="vectors")
    return rows.tolist()


def in_order(ids: Sequence[int], records: Sequence[Any], with_vectors: bool) -> list[tuple[int, dict[str, Any], np.ndarray | None]]:
    """``retrieve``'s contract from a client's records (``.id``, ``.payload``, ``.vector``):
    the order asked for, unknown ids left out, the dense vector as float32 when asked for."""
    by_id = {r.id: r for r in records}
    out = []
    for i in ids:
        r = by_id.get(i)
        if r is not None:
            vec = np.asarray(r.vector[DENSE], dtype=np.float32) if with_vectors else None
            out.append((i, r.payload or {}, vec))
    return out
