"""Micro-batching of query embeddings: concurrent searches share one model call.

A search thread hands its query to :meth:`BatchingEncoder.encode_query`. When
the model is free and no query waits (a lightly loaded server), that thread
runs the model itself, through ``encode_query``: no hand-over to another
thread, no wait (unless a batching window is set). Otherwise the query waits,
and one worker thread takes every query waiting once the model is free (after
the window, if any) and embeds them in one ``encode_queries`` call. One model call runs at a time
either way, so under load queries pile up while the model works and the next
call embeds them together.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Protocol

import numpy as np

from searchtrace.retriever.embedding.encoder import cache_identity


class QueryEncoder(Protocol):
    """What the batcher wraps: the retriever's encoder (``retriever.embedding.Encoder``) plus a batch call."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def encode_query(self, text: str) -> np.ndarray: ...

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def encode_documents(self, texts: Sequence[str], batch_size: int = 64, progress: bool = False) -> np.ndarray: ...


class BatchingEncoder:
    """An encoder whose ``encode_query`` is served in batches by one worker thread.

    Args:
        inner: the model (``encode_query``, ``encode_queries``, ``encode_documents``).
        window_ms: once the model is free, how long to wait for more queries (0: none, and a
            query that finds the model free runs at once in its own thread).
        max_batch: most queries in one model call.

    Attributes:
        calls: model calls made for queries so far; ``queries``: queries embedded.
    """

    def __init__(self, inner: QueryEncoder, window_ms: float = 0.0, max_batch: int = 64) -> None:
        self.inner = inner
        self.window_s = window_ms / 1000
        self.max_batch = max_batch
        self.calls = 0
        self.queries = 0
        self._pending: list[tuple[str, Future[np.ndarray]]] = []
        self._ready = threading.Condition()
        self._closed = False
        self._busy = False  # a model call runs (in a search thread or the worker)
        self._worker: threading.Thread | None = None

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def identity(self) -> str:
        """The model's own cache key (``embedding.encoder.cache_identity``): a server, the CLI and an eval
        file the same texts' vectors under one key, so what one embedded the others reuse."""
        return cache_identity(self.inner)

    @property
    def dim(self) -> int:
        return self.inner.dim

    def encode_documents(self, texts: Sequence[str], batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """The model's own (index building does not go through the batcher)."""
        return self.inner.encode_documents(texts, batch_size=batch_size, progress=progress)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """The model's own batch call (a caller with a batch needs no batcher)."""
        return self.inner.encode_queries(texts)

    def encode_query(self, text: str) -> np.ndarray:
        """Embed one query: in this thread when the model is free, else in one call with the others waiting."""
        future: Future[np.ndarray] = Future()
        with self._ready:
            if self._closed:
                raise RuntimeError("the query batcher is closed")
            alone = not self.window_s and not self._busy and not self._pending
            if alone:
                self._busy = True
            else:
                if self._worker is None:
                    self._worker = threading.Thread(target=self._run, name="query-batcher", daemon=True)
                    self._worker.start()
                self._pending.append((text, future))
                self._ready.notify()
        if not alone:
            return future.result()
        done = False
        try:
            vector = self.inner.encode_query(text)
            done = True
        finally:
            with self._ready:
                self._busy = False
                self.calls += done
                self.queries += done
                self._ready.notify()  # the worker takes what queued meanwhile
        return vector

    def close(self) -> None:
        """Stop the worker (queries waiting are still embedded first)."""
        with self._ready:
            self._closed = True
            self._ready.notify()
        if self._worker is not None:
            self._worker.join(5)

    def _take(self) -> list[tuple[str, Future[np.ndarray]]] | None:
        with self._ready:
            while not self._closed and (self._busy or not self._pending):
                self._ready.wait()
            while self._busy:  # closing while a search thread's call runs: let it finish
                self._ready.wait()
            if not self._pending:
                return None
            if self.window_s > 0 and len(self._pending) < self.max_batch:
                deadline = time.monotonic() + self.window_s
                while len(self._pending) < self.max_batch and (left := deadline - time.monotonic()) > 0:
                    self._ready.wait(left)
            batch, self._pending = self._pending[:self.max_batch], self._pending[self.max_batch:]
            self._busy = True
            return batch

    def _run(self) -> None:
        while (batch := self._take()) is not None:
            texts = [text for text, _ in batch]
            vectors: list[np.ndarray] | None = None
            try:
                vectors = ([self.inner.encode_query(texts[0])] if len(texts) == 1
                           else list(self.inner.encode_queries(texts)))
            except BaseException as exc:  # the callers raise it; the worker carries on
                for _, future in batch:
                    future.set_exception(exc)
            finally:
                with self._ready:
                    self._busy = False
                    if vectors is not None:
                        self.calls += 1
                        self.queries += len(batch)
                    self._ready.notify()
            for (_, future), vector in zip(batch, vectors or []):
                future.set_result(vector)
