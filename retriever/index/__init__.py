"""Content-addressed indexes: built once, verified on every open, searched by many processes at once.

An index lives in ``<home>/indexes/<dataset>-<key>/`` where ``key`` hashes the
dataset fingerprint (corpus + triples bytes) and the index configuration
(embedding model, BM25, passage parts, layout version): :mod:`.keys`. It holds
``manifest.json`` (written last, listing every other file with its size and
sha256: :mod:`.manifest`), ``doc_ids.json``, ``term_stats.npz``, the Qdrant
Edge shard (embedded default), the graph file and, with passage parts,
``vectors.npy``. :mod:`.build` writes and publishes it (one builder at a time,
one atomic rename), :mod:`.opening` checks and opens it (each process on its
own mirror of the shard: :mod:`.private_shard`), :mod:`.ensure` does both.
Embeddings are cached by text hash in ``<home>/cache/`` so a changed corpus
embeds only new texts, and a damaged index is rebuilt without embedding anything.
"""

from searchtrace.retriever.index.build import VECTORS_FILE, StoreFactory, build_index, payload, published_problems
from searchtrace.retriever.index.ensure import ensure_index
from searchtrace.retriever.index.keys import SCHEMA_VERSION, IndexLocation, index_key, locate
from searchtrace.retriever.index.manifest import DamagedIndex, FileEntry, IndexManifest, Problem, check, read_manifest
from searchtrace.retriever.index.opening import OpenIndex, open_index

__all__ = [
    "SCHEMA_VERSION",
    "VECTORS_FILE",
    "DamagedIndex",
    "FileEntry",
    "IndexLocation",
    "IndexManifest",
    "OpenIndex",
    "Problem",
    "StoreFactory",
    "build_index",
    "check",
    "ensure_index",
    "index_key",
    "locate",
    "open_index",
    "payload",
    "published_problems",
    "read_manifest",
]
