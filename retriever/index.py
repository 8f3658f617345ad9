"""Content-addressed indexes: build once, reuse while data and config are unchanged.

An index lives in ``<home>/indexes/<dataset>-<key>/`` where ``key`` hashes the
dataset fingerprint (corpus + triples bytes) and the index configuration
(embedding model, BM25 parameters, passage parts, schema version). It holds ``manifest.json``
(written last: its presence marks a complete index), ``doc_ids.json``, the
Qdrant Edge shard (embedded default), the graph file and, with passage parts,
``vectors.npy`` (the passage vectors, for the dense stage's passage cosines). Embeddings are cached
by text hash in ``<home>/cache/`` so a changed corpus embeds only new texts.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from searchtrace.retriever.config import RetrieverConfig
from searchtrace.retriever.data.beir import Dataset, dataset_fingerprint, load_dataset
from searchtrace.retriever.graph.base import GraphStore
from searchtrace.retriever.types import Document
from searchtrace.retriever.vectorstore.base import PointRow, VectorStore
from searchtrace.retriever.vectorstore.bm25 import Bm25Encoder, TermStats, mean_token_length

if TYPE_CHECKING:
    from searchtrace.retriever.embedding import Encoder

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2

StoreFactory = Callable[[str], VectorStore]
VECTORS_FILE = "vectors.npy"
WRITE_CHUNK = 2048  # documents per BM25 encoding, parts embedding call and upsert (the stores batch further)


@dataclass(frozen=True)
class IndexManifest:
    key: str
    dataset: str
    dataset_fingerprint: str
    n_docs: int
    n_triples: int
    avg_len: float
    model: str
    dim: int
    vector_backend: str  # "edge" or the Qdrant URL
    collection: str
    graph_backend: str  # "memory", "neo4j" or "none"
    built_at: float
    build_seconds: float
    embedded_texts: int  # texts embedded (not served from the cache) by this build
    parts: int = 0  # part vectors (titles and sentences) in the ``parts`` multivector; 0 = none


@dataclass
class OpenIndex:
    """Everything a search needs, opened."""

    manifest: IndexManifest
    path: Path
    store: VectorStore
    graph: GraphStore | None
    bm25: Bm25Encoder
    doc_ids: np.ndarray  # object array: point id -> document id
    point_of: dict[str, int]
    term_stats: TermStats
    vectors: np.ndarray | None = None  # passage vectors by point id (memory-mapped), with parts only

    def close(self) -> None:
        self.store.close()
        if self.graph is not None:
            self.graph.close()


def payload(doc: Document) -> dict:
    return {"id": doc.id, "title": doc.title, "text": doc.text, "collection": doc.collection,
            "tags": list(doc.tags), "language": doc.language, "url": doc.url, "timestamp": doc.timestamp}


def index_key(dataset_fp: str, model_id: str, config: RetrieverConfig) -> str:
    spec = {"schema": SCHEMA_VERSION, "data": dataset_fp, "model": model_id, "bm25": "qdrant-english",
            "qdrant": config.qdrant_url or "edge", "neo4j": config.neo4j.uri if config.neo4j else None}
    if config.dense.parts:
        spec["parts"] = {"max": config.dense.max_parts, "splitter": 1, "hnsw": False, "vectors_file": True}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:20]


def index_dir(config: RetrieverConfig, dataset_name: str, key: str) -> Path:
    return config.home.index(dataset_name, key)


def _make_store(config: RetrieverConfig, path: Path, collection: str) -> VectorStore:
    if config.qdrant_url:
        from searchtrace.retriever.vectorstore.server import ServerStore
        return ServerStore(url=config.qdrant_url, collection=collection, api_key=config.qdrant_api_key,
                           shard_number=config.qdrant_shards, replication_factor=config.qdrant_replication)
    from searchtrace.retriever.vectorstore.edge import EdgeStore
    return EdgeStore(path / "shard")


def _make_graph(config: RetrieverConfig, path: Path) -> GraphStore:
    if config.neo4j:
        from searchtrace.retriever.graph.neo4j import Neo4jGraph
        n = config.neo4j
        return Neo4jGraph(n.uri, n.user, n.password, database=n.database, timeout_s=config.graph.timeout_s)
    from searchtrace.retriever.graph.memory import MemoryGraph
    return MemoryGraph(path / "graph.json")


@dataclass
class PartVectors:
    """Part vectors (``retriever.parts``), embedded chunk by chunk so that a large corpus
    never holds them all; counts what it embedded and stored."""

    embedder: Any
    cache: Any  # retriever.embedding.EmbeddingCache
    max_parts: int
    progress: bool = False
    embedded: int = 0
    stored: int = 0

    def of(self, docs: list[Document], vectors: np.ndarray) -> list[np.ndarray]:
        """Each document's (n_parts x dim) vectors; a document with no parts gets its own vector."""
        from searchtrace.retriever.embedding import embed_with_cache
        from searchtrace.retriever.parts import passage_parts

        texts = [passage_parts(d.title, d.text, self.max_parts) for d in docs]
        flat, embedded = embed_with_cache(self.embedder, self.cache, [t for ts in texts for t in ts],
                                          progress=self.progress)
        bounds = np.cumsum([0] + [len(ts) for ts in texts])
        out = [flat[a:b] if b > a else vectors[i][None, :] for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))]
        self.embedded += embedded
        self.stored += sum(len(p) for p in out)
        return out


def _write_points(store: VectorStore, docs: list[Document], vectors: np.ndarray, bm25: Bm25Encoder,
                  progress: bool, parts: PartVectors | None = None) -> TermStats:
    """Upsert every document, chunk by chunk; returns the corpus' BM25 term statistics."""
    from tqdm import tqdm

    df: dict[int, int] = {}
    bar = tqdm(total=len(docs), desc="indexing", unit="doc", disable=not progress)
    for start in range(0, len(docs), WRITE_CHUNK):
        batch = docs[start:start + WRITE_CHUNK]
        sparse = bm25.encode_documents([d.content for d in batch])
        for vec in sparse:
            for term in vec.indices:
                df[term] = df.get(term, 0) + 1
        part_vectors = parts.of(batch, vectors[start:start + len(batch)]) if parts else [None] * len(batch)
        store.upsert([PointRow(start + i, vectors[start + i], sparse[i], payload(d), part_vectors[i])
                      for i, d in enumerate(batch)])
        bar.update(len(batch))
    bar.close()
    store.flush()
    return TermStats(len(docs), df)


def existing_index(dataset_dir: Path, config: RetrieverConfig, model_id: str) -> tuple[Path, str, bool]:
    """The index folder for a dataset folder, its key, and whether it is complete."""
    dataset_fp = dataset_fingerprint(dataset_dir)
    key = index_key(dataset_fp, model_id, config)
    path = index_dir(config, Path(dataset_dir).resolve().name, key)
    return path, dataset_fp, (path / "manifest.json").exists()


def build_index(dataset: Dataset, config: RetrieverConfig, embedder: Encoder, *, progress: bool = True,
                force: bool = False, make_store: StoreFactory | None = None) -> Path:
    """Index ``dataset`` unless an identical index exists; returns its folder.

    ``make_store(collection)`` overrides the vector store the configuration picks
    (for instance a ``ServerStore`` over an existing ``QdrantClient``).
    """
    from searchtrace.retriever.embedding import EmbeddingCache, embed_with_cache

    path, dataset_fp, complete = existing_index(dataset.root, config, embedder.model_id)
    key = path.name.rsplit("-", 1)[1]
    if complete and not force:
        log.info("index %s is up to date", path)
        return path
    started = time.perf_counter()
    tmp = path.with_name(path.name + ".building")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    docs = list(dataset.docs)
    texts = [d.content for d in docs]
    cache = EmbeddingCache(config.home.embedding_cache)
    vectors, embedded = embed_with_cache(embedder, cache, texts, progress=progress)
    parts = PartVectors(embedder, cache, config.dense.max_parts, progress) if config.dense.parts else None
    avg_len = mean_token_length(texts)
    bm25 = Bm25Encoder(avg_len)
    collection = f"searchtrace_{dataset.name}_{key}"
    store = make_store(collection) if make_store else _make_store(config, tmp, collection)
    store.create(vectors.shape[1] if len(vectors) else embedder.dim, parts=parts is not None)
    try:
        _write_points(store, docs, vectors, bm25, progress, parts).save(tmp / "term_stats.npz")
    finally:
        cache.close()
    store.close()
    graph_backend = "none"
    if dataset.has_triples:
        graph = _make_graph(config, tmp)
        graph.connect()
        graph.clear()
        graph.load(dataset.triples, dataset.aliases)
        if hasattr(graph, "save"):
            graph.save(tmp / "graph.json")
        graph.close()
        graph_backend = "neo4j" if config.neo4j else "memory"
    (tmp / "doc_ids.json").write_text(json.dumps([d.id for d in docs]), encoding="utf-8")
    if parts is not None:  # the dense stage's passage cosines (see retriever.stages.dense)
        np.save(tmp / VECTORS_FILE, np.asarray(vectors, dtype=np.float32))
    manifest = IndexManifest(
        key=key, dataset=dataset.name, dataset_fingerprint=dataset_fp, n_docs=len(docs),
        n_triples=len(dataset.triples), avg_len=avg_len, model=embedder.model_id, dim=int(vectors.shape[1]),
        vector_backend=config.qdrant_url or "edge", collection=collection, graph_backend=graph_backend,
        built_at=time.time(), build_seconds=time.perf_counter() - started,
        embedded_texts=int(embedded) + (parts.embedded if parts else 0), parts=parts.stored if parts else 0,
    )
    (tmp / "manifest.json").write_text(json.dumps(asdict(manifest), indent=2), encoding="utf-8")
    shutil.rmtree(path, ignore_errors=True)
    tmp.rename(path)
    return path


def open_index(path: Path, config: RetrieverConfig, *, make_store: StoreFactory | None = None) -> OpenIndex:
    """Open a built index folder (``make_store`` as in :func:`build_index`)."""
    data = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    manifest = IndexManifest(**data)
    store = make_store(manifest.collection) if make_store else _make_store(config, path, manifest.collection)
    store.open()
    graph = None
    if manifest.graph_backend != "none":
        graph = _make_graph(config, path)
        graph.connect()
    doc_ids = np.array(json.loads((path / "doc_ids.json").read_text(encoding="utf-8")), dtype=object)
    vectors = np.load(path / VECTORS_FILE, mmap_mode="r") if manifest.parts else None
    return OpenIndex(manifest, path, store, graph, Bm25Encoder(manifest.avg_len), doc_ids,
                     {d: i for i, d in enumerate(doc_ids)}, TermStats.load(path / "term_stats.npz"), vectors)


def ensure_index(dataset_dir: Path, config: RetrieverConfig, embedder: Encoder, *, progress: bool = True,
                 force: bool = False) -> OpenIndex:
    """Load the dataset, build its index if needed, and open it."""
    path, _, complete = existing_index(dataset_dir, config, embedder.model_id)
    if not complete or force:
        path = build_index(load_dataset(dataset_dir), config, embedder, progress=progress, force=force)
    return open_index(path, config)
