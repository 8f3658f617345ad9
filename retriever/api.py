"""Open a ready-to-search retriever on a dataset folder in one call."""

from __future__ import annotations

from pathlib import Path

from retriever.config import RetrieverConfig
from retriever.index import ensure_index
from retriever.pipeline import Retriever


def open_retriever(dataset_dir: str | Path, config: RetrieverConfig | None = None, *, embedder=None,
                   progress: bool = True, tracer=None, capture=None, deferred=None) -> Retriever:
    """Index the dataset if needed (content-addressed) and return a Retriever on it."""
    from retriever.embedding import Embedder

    config = config or RetrieverConfig.resolve()
    embedder = embedder or Embedder()
    index = ensure_index(Path(dataset_dir), config, embedder, progress=progress)
    return Retriever(index, embedder, config, tracer=tracer, capture=capture, deferred=deferred)
