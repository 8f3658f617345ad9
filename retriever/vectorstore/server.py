"""A Qdrant server (or ``QdrantClient(":memory:")``) through ``qdrant-client``."""

from __future__ import annotations

import os
import warnings
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import httpx
import numpy as np
from qdrant_client import models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from searchtrace import environment as env_names
from searchtrace.envvalues import text
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

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

DEFAULT_URL = "http://localhost:6333"
DEFAULT_COLLECTION = "searchtrace"
UPSERT_BATCH = 256
_KEYWORD_FIELDS = ("id", "collection", "tags")
_DATETIME_FIELDS = ("timestamp",)
MAX_SIM = models.MultiVectorConfig(comparator=models.MultiVectorComparator.MAX_SIM)
NO_HNSW = models.HnswConfigDiff(m=0)  # the parts multivector only rescores (see edge.py)
_UNREACHABLE = (ResponseHandlingException, httpx.TransportError, ConnectionError)


to_server_filter = translator(Builders(
    match_value=lambda key, value: models.FieldCondition(key=key, match=models.MatchValue(value=value)),
    match_any=lambda key, values: models.FieldCondition(key=key, match=models.MatchAny(any=values)),
    datetime_range=lambda key, gte, lt: models.FieldCondition(key=key, range=models.DatetimeRange(
        gte=_instant(gte), lt=_instant(lt))),
    all_of=lambda must: models.Filter(must=must),
))
"""Translate a :class:`PayloadFilter` into a ``qdrant_client`` filter (``None`` if empty)."""


def _instant(iso: str | None) -> datetime | None:
    """An ISO 8601 bound of a date filter as the datetime the client's model expects."""
    return None if iso is None else datetime.fromisoformat(iso)


def _point(row: PointRow) -> models.PointStruct:
    sparse = models.SparseVector(indices=list(row.sparse.indices), values=list(row.sparse.values))
    vector = {DENSE: row.dense.tolist(), SPARSE: sparse}
    if row.parts is not None:
        vector[PARTS] = np.asarray(row.parts, dtype=np.float32).tolist()
    return models.PointStruct(id=row.id, vector=vector, payload=row.payload)


class ServerStore:
    """A :class:`~retriever.vectorstore.base.VectorStore` on a Qdrant collection.

    Args:
        url: Server URL; else ``$QDRANT_URL``; else ``http://localhost:6333``.
        collection: Collection name.
        api_key: API key; else ``$QDRANT_API_KEY``.
        client: A ready ``QdrantClient`` (e.g. ``QdrantClient(":memory:")``); ``url``
            and ``api_key`` are then unused.
    """

    def __init__(self, url: str | None = None, collection: str = DEFAULT_COLLECTION,
                 api_key: str | None = None, client: QdrantClient | None = None, *,
                 shard_number: int | None = None, replication_factor: int | None = None) -> None:
        self.url = url or text(os.environ, env_names.QDRANT_URL) or DEFAULT_URL
        self.collection = collection
        self._api_key = api_key or text(os.environ, env_names.QDRANT_API_KEY)
        self._client = client
        self._owns_client = client is None
        self._where = "an injected client" if client is not None else self.url
        self._connected = False
        self._layout = {k: v for k, v in (("shard_number", shard_number), ("replication_factor", replication_factor))
                        if v is not None}

    @contextmanager
    def _calling(self, what: str) -> Iterator[None]:
        try:
            yield
        except _UNREACHABLE as exc:
            raise BackendUnavailable(f"Qdrant at {self._where} unreachable while {what}: {exc}") from exc
        except UnexpectedResponse as exc:
            message = f"Qdrant at {self._where} answered HTTP {exc.status_code} while {what}: {exc.reason_phrase}"
            if exc.status_code in (401, 403) or (exc.status_code or 500) >= 500:
                raise BackendUnavailable(message) from exc
            raise SearchtraceError(f"{message} {exc.content!r}") from exc
        except ValueError as exc:  # local mode and client-side checks reject a bad request so
            raise SearchtraceError(f"Qdrant client rejected the request while {what}: {exc}") from exc

    def _connect(self) -> QdrantClient:
        if self._client is None:
            from qdrant_client import QdrantClient

            # check_compatibility would probe the server from a background thread and only
            # warn; open()/create() probe it here and raise BackendUnavailable instead.
            self._client = QdrantClient(url=self.url, api_key=self._api_key, check_compatibility=False)
        self._connected = True
        return self._client

    @property
    def client(self) -> QdrantClient:
        if not self._connected or self._client is None:
            raise BackendUnavailable(f"collection {self.collection!r} is not open: call open() or create()")
        return self._client

    def create(self, dim: int, parts: bool = False) -> None:
        """Create the collection (dropping an existing one) and its payload indexes
        (and the ``parts`` multivector when ``parts``)."""
        vectors = {DENSE: models.VectorParams(size=dim, distance=models.Distance.COSINE)}
        if parts:
            vectors[PARTS] = models.VectorParams(size=dim, distance=models.Distance.COSINE, multivector_config=MAX_SIM,
                                                 hnsw_config=NO_HNSW)
        client = self._connect()
        with self._calling(f"creating collection {self.collection!r}"):
            if client.collection_exists(self.collection):
                client.delete_collection(self.collection)
            client.create_collection(
                self.collection,
                vectors_config=vectors,
                sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
                shard_number=self._layout.get("shard_number"),
                replication_factor=self._layout.get("replication_factor"),
            )
            with warnings.catch_warnings():  # local mode warns that indexes are no-ops
                warnings.filterwarnings("ignore", message="Payload indexes have no effect")
                for field in _KEYWORD_FIELDS:
                    client.create_payload_index(self.collection, field, models.PayloadSchemaType.KEYWORD)
                for field in _DATETIME_FIELDS:
                    client.create_payload_index(self.collection, field, models.PayloadSchemaType.DATETIME)

    def open(self) -> None:
        """Connect and check that the collection exists."""
        client = self._connect()
        with self._calling(f"opening collection {self.collection!r}"):
            exists = client.collection_exists(self.collection)
        if not exists:
            self._connected = False
            raise NotFoundError(f"no collection {self.collection!r} at {self._where}: build the index first",
                                field="collection")

    def close(self) -> None:
        """Disconnect; an injected client is left open for its owner."""
        self._connected = False
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None

    def upsert(self, rows: Sequence[PointRow]) -> None:
        client = self.client
        with self._calling("upserting points"):
            for start in range(0, len(rows), UPSERT_BATCH):
                points = [_point(r) for r in rows[start:start + UPSERT_BATCH]]
                client.upsert(self.collection, points=points, wait=True)

    def flush(self) -> None:
        """Nothing to do: upserts wait for the server, which indexes in the background."""

    def count(self) -> int:
        with self._calling("counting points"):
            return self.client.count(self.collection, exact=True).count

    def _run(self, requests: list[models.QueryRequest]) -> list[list[Hit]]:
        with self._calling("searching"):
            responses = self.client.query_batch_points(self.collection, requests=requests)
        return [[Hit(int(p.id), p.score) for p in r.points] for r in responses]

    def search_dense(self, vectors: np.ndarray, limit: int, flt: PayloadFilter | None = None) -> list[list[Hit]]:
        """Nearest neighbours by cosine for each row of ``vectors`` (one request)."""
        return self._run(_dense_requests(vectors, limit, flt))

    def search_sparse(self, vectors: Sequence[Sparse], limit: int,
                      flt: PayloadFilter | None = None) -> list[list[Hit]]:
        """BM25 (IDF-weighted) search for each sparse query (one request)."""
        return self._run(_sparse_requests(vectors, limit, flt))

    def search_hybrid(self, dense: np.ndarray, sparse: Sequence[Sparse], limit: int,
                      flt: PayloadFilter | None = None) -> tuple[list[list[Hit]], list[list[Hit]]]:
        """Dense and sparse results for a batch of queries from one batch request."""
        if len(dense) != len(sparse):
            raise ValidationError(f"{len(dense)} dense but {len(sparse)} sparse queries", field="sparse")
        results = self._run(_dense_requests(dense, limit, flt) + _sparse_requests(sparse, limit, flt))
        return results[:len(dense)], results[len(dense):]

    def search_best_parts(self, vectors: np.ndarray, limit: int,
                          flt: PayloadFilter | None = None) -> list[list[Hit]]:
        """The ``limit`` nearest passages, scored by their best part (one request)."""
        f = _checked_filter(flt, limit)
        return self._run([models.QueryRequest(query=[v], using=PARTS, limit=limit,
                                              prefetch=models.Prefetch(query=v, using=DENSE, limit=limit, filter=f))
                          for v in dense_rows(vectors)])

    def retrieve(self, ids: Sequence[int], with_vectors: bool = False
                 ) -> list[tuple[int, dict[str, Any], np.ndarray | None]]:
        """Points by id in the order asked; unknown ids are left out."""
        with self._calling("retrieving points"):
            records = self.client.retrieve(self.collection, list(ids), with_payload=True,
                                           with_vectors=[DENSE] if with_vectors else False)
        return in_order(ids, records, with_vectors)


def _checked_filter(flt: PayloadFilter | None, limit: int) -> models.Filter | None:
    """Validate ``limit``, translate ``flt``."""
    if limit < 1:
        raise ValidationError(f"limit must be >= 1, got {limit}", field="limit")
    return to_server_filter(flt) if flt is not None else None


def _dense_requests(vectors: np.ndarray, limit: int, flt: PayloadFilter | None) -> list[models.QueryRequest]:
    rows = dense_rows(vectors)
    f = _checked_filter(flt, limit)
    return [models.QueryRequest(query=v, using=DENSE, limit=limit, filter=f) for v in rows]


def _sparse_requests(vectors: Sequence[Sparse], limit: int, flt: PayloadFilter | None) -> list[models.QueryRequest]:
    f = _checked_filter(flt, limit)
    return [models.QueryRequest(query=models.SparseVector(indices=list(s.indices), values=list(s.values)),
                                using=SPARSE, limit=limit, filter=f) for s in vectors]
