"""Qdrant Edge: the vector store embedded in the process (the default backend)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import qdrant_edge as qe

from searchtrace.errors import BackendUnavailable, NotFoundError, SearchtraceError, ValidationError
from searchtrace.retriever.vectorstore._filters import Builders, translator
from searchtrace.retriever.vectorstore.base import (
    DENSE,
    PARTS,
    SPARSE,
    Hit,
    PayloadFilter,
    PointRow,
    Sparse,
    dense_rows,
    in_order,
)

UPSERT_BATCH = 1024
MAX_SIM = qe.MultiVectorConfig(qe.MultiVectorComparator.MaxSim)
# The parts multivector only rescores candidates the passage vectors found: no HNSW graph
# (m = 0), whose MaxSim-to-MaxSim build cost grows with parts squared.
NO_HNSW = qe.HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10_000)
_KEYWORD_FIELDS = ("id", "collection", "tags")
_DATETIME_FIELDS = ("timestamp",)


to_edge_filter = translator(Builders(
    match_value=lambda key, value: qe.FieldCondition(key=key, match=qe.MatchValue(value)),
    match_any=lambda key, values: qe.FieldCondition(key=key, match=qe.MatchAny(values)),
    datetime_range=lambda key, gte, lt: qe.FieldCondition(key=key, range=qe.RangeDateTime(gte=gte, lt=lt)),
    all_of=lambda must: qe.Filter(must=must),
))
"""Translate a :class:`PayloadFilter` into a Qdrant Edge ``Filter`` (``None`` if empty)."""


def _point(row: PointRow) -> qe.Point:
    vector = {DENSE: row.dense.tolist(),
              SPARSE: qe.SparseVector(list(row.sparse.indices), list(row.sparse.values))}
    if row.parts is not None:
        vector[PARTS] = np.asarray(row.parts, dtype=np.float32).tolist()
    return qe.Point(row.id, vector, row.payload)


def _hits(points: list[qe.ScoredPoint]) -> list[Hit]:
    return [Hit(int(p.id), p.score) for p in points]


class EdgeStore:
    """A :class:`~retriever.vectorstore.base.VectorStore` on a Qdrant Edge shard.

    Args:
        path: Shard directory.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._shard: qe.EdgeShard | None = None

    @property
    def shard(self) -> qe.EdgeShard:
        if self._shard is None:
            raise BackendUnavailable(f"Qdrant Edge shard at {self.path} is not open: call open() or create()")
        return self._shard

    def create(self, dim: int, parts: bool = False) -> None:
        """Create an empty shard (dropping any at ``path``) with payload indexes
        (and the ``parts`` multivector when ``parts``)."""
        self.close()
        if self.path.exists():
            if any(self.path.iterdir()) and not (self.path / "segments").is_dir():
                raise ValidationError(f"{self.path} is neither empty nor a Qdrant Edge shard: not deleting it",
                                      field="path")
            shutil.rmtree(self.path)
        vectors = {DENSE: qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine)}
        if parts:
            vectors[PARTS] = qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine, multivector_config=MAX_SIM,
                                                 hnsw_config=NO_HNSW)
        config = qe.EdgeConfig(
            vectors=vectors,
            sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        )
        self._shard = qe.EdgeShard.create(str(self.path), config)
        for field in _KEYWORD_FIELDS:
            self._shard.update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Keyword))
        for field in _DATETIME_FIELDS:
            self._shard.update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Datetime))

    def open(self) -> None:
        """Load the shard at ``path``."""
        if self._shard is not None:
            return
        if not self.path.is_dir():
            raise NotFoundError(f"no Qdrant Edge shard at {self.path}: build the index first", field="path")
        try:
            self._shard = qe.EdgeShard.load(str(self.path))
        except Exception as exc:  # the binding raises a bare Exception
            raise BackendUnavailable(f"cannot load Qdrant Edge shard at {self.path}: {exc}") from exc

    def close(self) -> None:
        if self._shard is not None:
            self._shard.close()
            self._shard = None

    def upsert(self, rows: Sequence[PointRow]) -> None:
        shard = self.shard
        for start in range(0, len(rows), UPSERT_BATCH):
            points = [_point(r) for r in rows[start:start + UPSERT_BATCH]]
            shard.update(qe.UpdateOperation.upsert_points(points))

    def flush(self) -> None:
        """Persist, then run the optimizers (merges segments, builds HNSW)."""
        self.shard.flush()
        self.shard.optimize()

    def count(self) -> int:
        return self.shard.count(qe.CountRequest(exact=True))

    def _run(self, queries: list[qe.Query], limit: int, flt: PayloadFilter | None) -> list[list[Hit]]:
        edge_filter = _checked_filter(flt, limit)
        return self._batch([qe.QueryRequest(limit=limit, query=q, filter=edge_filter, with_payload=False)
                            for q in queries])

    def _batch(self, requests: list[qe.QueryRequest]) -> list[list[Hit]]:
        try:
            results = self.shard.query_batch(qe.QueryBatchRequest(requests))
        except Exception as exc:  # the binding raises a bare Exception, e.g. on a wrong dimension
            raise SearchtraceError(f"Qdrant Edge rejected the query: {exc}") from exc
        return [_hits(r) for r in results]

    def search_dense(self, vectors: np.ndarray, limit: int, flt: PayloadFilter | None = None) -> list[list[Hit]]:
        """Nearest neighbours by cosine for each row of ``vectors`` (one engine call)."""
        return self._run(_dense_queries(vectors), limit, flt)

    def search_sparse(self, vectors: Sequence[Sparse], limit: int,
                      flt: PayloadFilter | None = None) -> list[list[Hit]]:
        """BM25 (IDF-weighted) search for each sparse query (one engine call)."""
        return self._run(_sparse_queries(vectors), limit, flt)

    def search_hybrid(self, dense: np.ndarray, sparse: Sequence[Sparse], limit: int,
                      flt: PayloadFilter | None = None) -> tuple[list[list[Hit]], list[list[Hit]]]:
        """Dense and sparse results for a batch of queries from one ``query_batch`` call."""
        if len(dense) != len(sparse):
            raise ValidationError(f"{len(dense)} dense but {len(sparse)} sparse queries", field="sparse")
        results = self._run(_dense_queries(dense) + _sparse_queries(sparse), limit, flt)
        return results[:len(dense)], results[len(dense):]

    def search_best_parts(self, vectors: np.ndarray, limit: int,
                          flt: PayloadFilter | None = None) -> list[list[Hit]]:
        """The ``limit`` nearest passages, scored by their best part (one engine call)."""
        edge_filter = _checked_filter(flt, limit)
        return self._batch([
            qe.QueryRequest(limit=limit, query=qe.Query.Nearest([v], using=PARTS), with_payload=False,
                            prefetches=[qe.Prefetch(limit=limit, query=qe.Query.Nearest(v, using=DENSE),
                                                    filter=edge_filter)])
            for v in dense_rows(vectors)])

    def retrieve(self, ids: Sequence[int], with_vectors: bool = False
                 ) -> list[tuple[int, dict[str, Any], np.ndarray | None]]:
        """Points by id in the order asked; unknown ids are left out."""
        records = self.shard.retrieve(list(ids), True, [DENSE] if with_vectors else False)
        return in_order(ids, records, with_vectors)


def _checked_filter(flt: PayloadFilter | None, limit: int) -> qe.Filter | None:
    """Validate ``limit``, translate ``flt``."""
    if limit < 1:
        raise ValidationError(f"limit must be >= 1, got {limit}", field="limit")
    return to_edge_filter(flt) if flt is not None else None


def _dense_queries(vectors: np.ndarray) -> list[qe.Query]:
    return [qe.Query.Nearest(v, using=DENSE) for v in dense_rows(vectors)]


def _sparse_queries(vectors: Sequence[Sparse]) -> list[qe.Query]:
    return [qe.Query.Nearest(qe.SparseVector(list(s.indices), list(s.values)), using=SPARSE)
            for s in vectors]
