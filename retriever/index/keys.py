"""Where an index lives: its content-addressed key and its folder under the home."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from searchtrace.retriever.config.model import RetrieverConfig
from searchtrace.retriever.data.beir import dataset_fingerprint, dataset_name

__all__ = ["SCHEMA_VERSION", "IndexLocation", "index_key", "locate"]

SCHEMA_VERSION = 4
"""Version of an index folder's layout; part of the key, so a new layout never reuses an old index.
3: the manifest lists every file with its size and sha256, and graphs on a shared Neo4j are
scoped by the index key.
4: ``term_stats.npz`` holds every point's BM25 term weights (the keyword stage rescores with them) and is
written byte for byte the same by every build of the same data."""


def index_key(dataset_fp: str, model_id: str, config: RetrieverConfig) -> str:
    """The key of the index of a dataset's bytes under a model and an index configuration."""
    spec: dict[str, object] = {"schema": SCHEMA_VERSION, "data": dataset_fp, "model": model_id,
                               "bm25": "qdrant-english", "qdrant": config.qdrant_url or "edge",
                               "neo4j": config.neo4j.uri if config.neo4j else None}
    if config.dense.parts:
        spec["parts"] = {"max": config.dense.max_parts, "splitter": 1, "hnsw": False, "vectors_file": True}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:20]


@dataclass(frozen=True)
class IndexLocation:
    """The index a dataset folder maps to (it may not be built yet).

    Attributes:
        path: the published folder, ``<home>/indexes/<dataset>-<key>``.
        key: the content-addressed key.
        dataset_fingerprint: the dataset's content hash.
        dataset_name: the dataset folder's name.
    """

    path: Path
    key: str
    dataset_fingerprint: str
    dataset_name: str

    @property
    def lock_file(self) -> Path:
        """The file a builder holds locked while it builds this index."""
        return self.path.with_name(self.path.name + ".lock")


def locate(dataset_dir: Path, config: RetrieverConfig, model_id: str) -> IndexLocation:
    """The index of ``dataset_dir`` under ``config`` and the model ``model_id``."""
    fingerprint = dataset_fingerprint(dataset_dir)
    key = index_key(fingerprint, model_id, config)
    name = dataset_name(dataset_dir)
    return IndexLocation(config.home.index(name, key), key, fingerprint, name)
