"""Build an index and publish it: written aside, verified, then moved into place by one rename.

At most one process builds a given index at a time (a lock file beside it); a
second builder waits, then finds the index published and reuses it. A build is
written under ``<home>/indexes/.building/``, its shard loaded once to check it
holds every document, every file hashed into the manifest, everything fsync'd,
and only then renamed to its published name. A reader therefore sees no index
or a complete one, never a half-written one, and a builder killed at any point
leaves only a folder the next builder removes.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from searchtrace.durable import fsync_dir, fsync_tree
from searchtrace.retriever.config.model import RetrieverConfig
from searchtrace.retriever.data.beir import Dataset
from searchtrace.retriever.graph.base import GraphStore
from searchtrace.retriever.index.keys import IndexLocation, locate
from searchtrace.retriever.index.locks import FileLock
from searchtrace.retriever.index.manifest import (
    MANIFEST,
    DamagedIndex,
    IndexManifest,
    Problem,
    check,
    describe,
    read_manifest,
)
from searchtrace.retriever.index.space import chunked, reserve
from searchtrace.retriever.types import Document
from searchtrace.retriever.vectorstore.base import PointRow, Sparse, VectorStore
from searchtrace.retriever.vectorstore.bm25 import Bm25Encoder, mean_token_length
from searchtrace.retriever.vectorstore.term_stats import TermStats

if TYPE_CHECKING:
    from searchtrace.progress import Progress
    from searchtrace.retriever.embedding.cache import EmbeddingCache, Encoder

__all__ = ["BUILDING", "DOC_IDS", "GRAPH", "StoreFactory", "TERM_STATS", "VECTORS_FILE", "build_index",
           "configured_graph", "configured_store", "payload", "published_problems", "texts_to_embed"]

log = logging.getLogger(__name__)

StoreFactory = Callable[[str], VectorStore]
"""``make_store(collection)``: a vector store other than the one the configuration picks."""

BUILDING = ".building"
DOC_IDS = "doc_ids.json"
TERM_STATS = "term_stats.npz"
VECTORS_FILE = "vectors.npy"
GRAPH = "graph.json"
WRITE_CHUNK = 2048  # documents per BM25 encoding, parts embedding call and upsert (the stores batch further)


def payload(doc: Document) -> dict[str, object]:
    """The stored payload of a document."""
    return {"id": doc.id, "title": doc.title, "text": doc.text, "collection": doc.collection,
            "tags": list(doc.tags), "language": doc.language, "url": doc.url, "timestamp": doc.timestamp}


def configured_store(config: RetrieverConfig, folder: Path, collection: str) -> VectorStore:
    """The vector store the configuration picks: a Qdrant server, else an Edge shard in ``folder``."""
    if config.qdrant_url:
        from searchtrace.retriever.vectorstore.server import ServerStore
        return ServerStore(url=config.qdrant_url, collection=collection, api_key=config.qdrant_api_key,
                           shard_number=config.qdrant_shards, replication_factor=config.qdrant_replication)
    from searchtrace.retriever.vectorstore.edge import EdgeStore
    return EdgeStore(folder / "shard")


def configured_graph(config: RetrieverConfig, folder: Path, key: str) -> GraphStore:
    """The graph store the configuration picks: Neo4j (the index's own graph in it), else ``folder``'s file."""
    if config.neo4j:
        from searchtrace.retriever.graph.neo4j import Neo4jGraph
        n = config.neo4j
        return Neo4jGraph(n.uri, n.user, n.password, database=n.database, timeout_s=config.graph.timeout_s,
                          graph=key)
    from searchtrace.retriever.graph.memory import MemoryGraph
    return MemoryGraph(folder / GRAPH)


@dataclass
class PartVectors:
    """Part vectors (``retriever.parts``), embedded chunk by chunk so that a large corpus
    never holds them all; counts what it embedded and stored."""

    embedder: Encoder
    cache: EmbeddingCache
    max_parts: int
    bar: Progress | None = None
    embedded: int = 0
    stored: int = 0

    def of(self, docs: list[Document], vectors: np.ndarray) -> list[np.ndarray]:
        """Each document's (n_parts x dim) vectors; a document with no parts gets its own vector."""
        from searchtrace.retriever.embedding.cache import embed_with_cache
        from searchtrace.retriever.index.parts import passage_parts

        texts = [passage_parts(d.title, d.text, self.max_parts) for d in docs]
        flat, embedded = embed_with_cache(self.embedder, self.cache, [t for ts in texts for t in ts], bar=self.bar)
        bounds = np.cumsum([0] + [len(ts) for ts in texts])
        out = [flat[a:b] if b > a else vectors[i][None, :] for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))]
        self.embedded += embedded
        self.stored += sum(len(p) for p in out)
        return out


def _write_points(store: VectorStore, docs: list[Document], vectors: np.ndarray, bm25: Bm25Encoder,
                  parts: PartVectors | None = None) -> TermStats:
    """Upsert every document, chunk by chunk (its part texts embedded as it goes); returns the corpus' BM25 term
    statistics."""
    rows: list[Sparse] = []
    for start in range(0, len(docs), WRITE_CHUNK):
        batch = docs[start:start + WRITE_CHUNK]
        sparse = bm25.encode_documents([d.content for d in batch])
        rows += sparse
        part_vectors = parts.of(batch, vectors[start:start + len(batch)]) if parts else [None] * len(batch)
        store.upsert([PointRow(start + i, vectors[start + i], sparse[i], payload(d), part_vectors[i])
                      for i, d in enumerate(batch)])
    store.flush()
    return TermStats.of_documents(rows)


def texts_to_embed(docs: list[Document], max_parts: int | None) -> int:
    """The texts a build embeds or finds cached: each document's, and with parts (``max_parts``) each part's."""
    if max_parts is None:
        return len(docs)
    from searchtrace.retriever.index.parts import passage_parts

    return len(docs) + sum(len(passage_parts(d.title, d.text, max_parts)) for d in docs)


def published_problems(folder: Path) -> list[Problem] | None:
    """What is wrong with a published index (an empty list: nothing); None when there is none."""
    if not (folder / MANIFEST).exists():
        return None
    try:
        manifest = read_manifest(folder)
    except DamagedIndex as exc:
        return exc.problems
    return check(folder, manifest)


def build_index(dataset: Dataset, config: RetrieverConfig, embedder: Encoder, *, progress: bool = True,
                force: bool = False, make_store: StoreFactory | None = None) -> Path:
    """Index ``dataset`` unless an intact identical index exists; returns its published folder.

    ``make_store(collection)`` overrides the vector store the configuration
    picks (for instance a ``ServerStore`` over an existing ``QdrantClient``).
    A damaged index (see :func:`published_problems`) is rebuilt.
    """
    where = locate(dataset.root, config, embedder.model_id)
    with FileLock(where.lock_file, f"building the index {where.path.name}"):
        problems = published_problems(where.path)
        if problems == [] and not force:
            log.info("index %s is up to date", where.path)
            return where.path
        if problems:  # said once: a caller that forces the rebuild of a damaged index has said it already
            log.log(logging.INFO if force else logging.WARNING, "index %s is damaged (%s): rebuilding it",
                    where.path, "; ".join(map(str, problems)))
        building = where.path.parent / BUILDING / f"{where.path.name}-{os.getpid()}"
        _clear_building(where)
        try:
            _build(dataset, config, embedder, where, building, progress, make_store)
            _publish(building, where.path)
        finally:
            shutil.rmtree(building, ignore_errors=True)
    return where.path


def _data_bytes(texts: list[str], dim: int, parts: bool) -> int:
    """What the points add to the shard beyond the holes of its files at creation: the vector storages' chunk
    files, made when the first point arrives and allocated whole (one for the passages' vectors, and with parts
    one for theirs, about one per 100 characters, and one for their offsets), plus the payloads and BM25 terms."""
    chars = sum(len(t) for t in texts)
    out = chunked(len(texts) * dim * 4)
    if parts:
        out += chunked((chars // 100) * dim * 4) + chunked(0)
    return out + 2 * chars * 3


def _clear_building(where: IndexLocation) -> None:
    """Remove what killed builds of this index left (the lock is ours: none is running)."""
    root = where.path.parent / BUILDING
    for stale in root.glob(f"{where.path.name}-*") if root.is_dir() else ():
        shutil.rmtree(stale, ignore_errors=True)


def _build(dataset: Dataset, config: RetrieverConfig, embedder: Encoder, where: IndexLocation, folder: Path,
           progress: bool, make_store: StoreFactory | None) -> None:
    from searchtrace.progress import progress as progress_of
    from searchtrace.retriever.embedding.cache import EmbeddingCache, embed_with_cache

    started = time.perf_counter()
    folder.mkdir(parents=True)
    docs = list(dataset.docs)
    texts = [d.content for d in docs]
    cache = EmbeddingCache(config.home.embedding_cache)
    # One bar over every text the build embeds, documents then part texts, with one estimate of the time left
    # (a bar per call showed four in turn, one of them estimating a single chunk's parts).
    bar = progress_of(texts_to_embed(docs, config.dense.max_parts if config.dense.parts else None), "embedding",
                      "text", bars=progress)
    try:
        vectors, embedded = embed_with_cache(embedder, cache, texts, bar=bar)
        parts = PartVectors(embedder, cache, config.dense.max_parts, bar) if config.dense.parts else None
        avg_len = mean_token_length(texts)
        collection = f"searchtrace_{dataset.name}_{where.key}"
        store = make_store(collection) if make_store else configured_store(config, folder, collection)
        store.create(vectors.shape[1] if len(vectors) else embedder.dim, parts=parts is not None)
        try:
            reserve(folder, _data_bytes(texts, int(vectors.shape[1]) if len(vectors) else embedder.dim,
                                        parts is not None), where.path.parent)
            _write_points(store, docs, vectors, Bm25Encoder(avg_len), parts).save(folder / TERM_STATS)
        finally:
            store.close()
    finally:
        bar.close()
        cache.close()
    _check_points(config, folder, collection, len(docs), make_store)
    graph_backend = _build_graph(dataset, config, folder, where.key)
    (folder / DOC_IDS).write_text(json.dumps([d.id for d in docs]), encoding="utf-8")
    if parts is not None:  # the dense stage's passage cosines (see retriever.stages.dense)
        np.save(folder / VECTORS_FILE, np.asarray(vectors, dtype=np.float32))
    manifest = IndexManifest(
        key=where.key, dataset=dataset.name, dataset_fingerprint=where.dataset_fingerprint, n_docs=len(docs),
        n_triples=len(dataset.triples), avg_len=avg_len, model=embedder.model_id, dim=int(vectors.shape[1]),
        vector_backend=config.qdrant_url or "edge", collection=collection, graph_backend=graph_backend,
        built_at=time.time(), build_seconds=time.perf_counter() - started,
        embedded_texts=int(embedded) + (parts.embedded if parts else 0), parts=parts.stored if parts else 0,
        dataset_path=str(Path(dataset.root).resolve()), files=describe(folder),
    )
    (folder / MANIFEST).write_text(json.dumps(manifest.to_json(), indent=2), encoding="utf-8")


def _check_points(config: RetrieverConfig, folder: Path, collection: str, n_docs: int,
                  make_store: StoreFactory | None) -> None:
    """Load the written store once and count its points: a build that lost documents is not published."""
    store = make_store(collection) if make_store else configured_store(config, folder, collection)
    store.open()
    try:
        stored = store.count()
    finally:
        store.close()
    if stored != n_docs:
        raise DamagedIndex(folder, [Problem("shard", f"{stored} points stored of {n_docs} documents")],
                           "the build was not published; run it again")


def _build_graph(dataset: Dataset, config: RetrieverConfig, folder: Path, key: str) -> str:
    if not dataset.has_triples:
        return "none"
    graph = configured_graph(config, folder, key)
    graph.connect()
    try:
        graph.clear()
        graph.load(dataset.triples, dataset.aliases)
        if hasattr(graph, "save"):
            graph.save(folder / GRAPH)
    finally:
        graph.close()
    return "neo4j" if config.neo4j else "memory"


def _publish(building: Path, final: Path) -> None:
    """Move a verified build into place with one rename (an older index there goes first)."""
    fsync_tree(building)
    if final.exists():
        trash = final.parent / BUILDING / f"{final.name}-old-{os.getpid()}"
        os.replace(final, trash)
        os.replace(building, final)
        shutil.rmtree(trash, ignore_errors=True)
    else:
        os.replace(building, final)
    fsync_dir(final.parent)
