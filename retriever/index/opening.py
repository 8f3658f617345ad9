"""Open a published index: check it, mirror its shard privately, load what a search needs.

Every open checks each file's presence and size and hashes the files outside
the shard (see :mod:`.manifest`), then reads each file's format (ids, BM25
statistics, passage vectors, graph) and loads a private mirror of the shard
(:mod:`.private_shard`), so any number of processes search one index at once.
What fails any of this is a :class:`~.manifest.DamagedIndex` naming the file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from searchtrace.errors import BackendUnavailable, SearchtraceError
from searchtrace.retriever.config.model import RetrieverConfig
from searchtrace.retriever.graph.base import GraphStore
from searchtrace.retriever.index.build import (
    DOC_IDS,
    GRAPH,
    TERM_STATS,
    VECTORS_FILE,
    StoreFactory,
    configured_graph,
    configured_store,
)
from searchtrace.retriever.index.manifest import SHARD, DamagedIndex, IndexManifest, Problem, check, read_manifest
from searchtrace.retriever.index.open_space import check_open
from searchtrace.retriever.index.private_shard import READERS, PrivateShard
from searchtrace.retriever.vectorstore.base import VectorStore
from searchtrace.retriever.vectorstore.bm25 import Bm25Encoder
from searchtrace.retriever.vectorstore.term_stats import TermStats

__all__ = ["OpenIndex", "open_index"]


@dataclass
class OpenIndex:
    """Everything a search needs, opened.

    Attributes:
        manifest: what the index holds.
        path: the published folder.
        store: the vector store (on this process's private mirror of the shard).
        graph: the knowledge graph, or None without triples.
        bm25: the query-side BM25 encoder.
        doc_ids: point id -> document id (object array).
        point_of: document id -> point id.
        term_stats: the corpus' BM25 term statistics.
        vectors: passage vectors by point id (memory-mapped), with passage parts only.
    """

    manifest: IndexManifest
    path: Path
    store: VectorStore
    graph: GraphStore | None
    bm25: Bm25Encoder
    doc_ids: np.ndarray
    point_of: dict[str, int]
    term_stats: TermStats
    vectors: np.ndarray | None = None
    mirror: PrivateShard | None = field(default=None, repr=False)

    def close(self) -> None:
        """Close the stores and remove the private mirror of the shard."""
        self.store.close()
        if self.graph is not None:
            self.graph.close()
        if self.mirror is not None:
            self.mirror.close()
            self.mirror = None


def _fix(manifest: IndexManifest | None) -> str:
    dataset = manifest.dataset_path if manifest and manifest.dataset_path else "DATASET"
    return f"rebuild it with `searchtrace index {dataset} --force`"


def _doc_ids(path: Path, manifest: IndexManifest) -> np.ndarray:
    try:
        ids = json.loads((path / DOC_IDS).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DamagedIndex(path, [Problem(DOC_IDS, f"unreadable ({exc})")], _fix(manifest)) from None
    if (not isinstance(ids, list) or len(ids) != manifest.n_docs or len(set(ids)) != len(ids)
            or not all(isinstance(i, str) for i in ids)):
        raise DamagedIndex(path, [Problem(DOC_IDS, f"not {manifest.n_docs} distinct document ids")], _fix(manifest))
    return np.array(ids, dtype=object)


def _vectors(path: Path, manifest: IndexManifest) -> np.ndarray | None:
    if not manifest.parts:
        return None
    try:
        vectors = np.load(path / VECTORS_FILE, mmap_mode="r")
    except (OSError, ValueError) as exc:
        raise DamagedIndex(path, [Problem(VECTORS_FILE, f"unreadable ({exc})")], _fix(manifest)) from None
    if vectors.shape != (manifest.n_docs, manifest.dim) or vectors.dtype != np.float32:
        raise DamagedIndex(path, [Problem(VECTORS_FILE, f"{vectors.dtype} {vectors.shape}, expected float32 "
                                                        f"({manifest.n_docs}, {manifest.dim})")], _fix(manifest))
    return vectors


def _term_stats(path: Path, manifest: IndexManifest) -> TermStats:
    try:
        return TermStats.load(path / TERM_STATS)
    except (OSError, ValueError, KeyError, EOFError) as exc:  # zip and npy errors are ValueErrors
        raise DamagedIndex(path, [Problem(TERM_STATS, f"unreadable ({exc})")], _fix(manifest)) from None


def _graph(path: Path, config: RetrieverConfig, manifest: IndexManifest) -> GraphStore | None:
    if manifest.graph_backend == "none":
        return None
    graph = configured_graph(config, path, manifest.key)
    try:
        graph.connect()
    except BackendUnavailable:
        raise
    except SearchtraceError as exc:
        raise DamagedIndex(path, [Problem(GRAPH, exc.message)], _fix(manifest)) from None
    if manifest.graph_backend == "neo4j" and manifest.n_triples and not graph.stats()["relations"]:
        graph.close()  # someone cleared this index's graph on the server: searches would find nothing
        raise DamagedIndex(path, [Problem("graph", f"the graph server holds none of this index's triples "
                                                   f"(graph {manifest.key})")], _fix(manifest))
    return graph


def _store(path: Path, config: RetrieverConfig, manifest: IndexManifest,
           make_store: StoreFactory | None) -> tuple[VectorStore, PrivateShard | None]:
    if make_store is not None or config.qdrant_url:
        store = make_store(manifest.collection) if make_store else configured_store(config, path, manifest.collection)
        store.open()
        return store, None
    from searchtrace.retriever.vectorstore.edge import EdgeStore

    check_open(path / SHARD, path, [path / VECTORS_FILE] if manifest.parts else [])  # before a file is mirrored or mapped: a full disk is a line, not SIGBUS
    mirror = PrivateShard.of(path / SHARD, path.parent / READERS, path.name)
    store = EdgeStore(mirror.path)
    try:
        store.open()
    except BaseException as exc:
        mirror.close()
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        problems = check(path, manifest, deep=True) or [Problem(SHARD, f"Qdrant Edge cannot load it ({exc})")]
        raise DamagedIndex(path, problems, _fix(manifest)) from None
    return store, mirror


def open_index(path: Path, config: RetrieverConfig, *, make_store: StoreFactory | None = None) -> OpenIndex:
    """Open a published index folder (``make_store`` as in :func:`~.build.build_index`).

    Raises:
        DamagedIndex: a file is missing, truncated, altered or unreadable (the message names it and the fix).
        BackendUnavailable: a configured server cannot be reached.
    """
    manifest = None
    try:
        manifest = read_manifest(path)
    except DamagedIndex as exc:
        raise DamagedIndex(path, exc.problems, _fix(None)) from None
    problems = check(path, manifest)
    if problems:
        raise DamagedIndex(path, problems, _fix(manifest))
    doc_ids = _doc_ids(path, manifest)
    vectors = _vectors(path, manifest)
    term_stats = _term_stats(path, manifest)
    graph = _graph(path, config, manifest)
    try:
        store, mirror = _store(path, config, manifest, make_store)
    except BaseException:
        if graph is not None:
            graph.close()
        raise
    return OpenIndex(manifest, path, store, graph, Bm25Encoder(manifest.avg_len), doc_ids,
                     {d: i for i, d in enumerate(doc_ids)}, term_stats, vectors, mirror)
