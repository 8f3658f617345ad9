"""Open a ready-to-search retriever on a dataset folder in one call."""

from __future__ import annotations

from pathlib import Path

from searchtrace.retriever.config import RetrieverConfig
from searchtrace.retriever.index import ensure_index
from searchtrace.retriever.pipeline import Retriever
from searchtrace.retriever.settings import resolve_config


def open_retriever(dataset_dir: str | Path, config: RetrieverConfig | None = None, *, embedder=None,
                   progress: bool = True, tracer=None, capture=None, deferred=None) -> Retriever:
    """Index the dataset if needed (content-addressed) and return a Retriever on it."""
    from searchtrace.retriever.embedding import Embedder

    config = config or resolve_config()
    embedder = embedder or Embedder()
    index = ensure_index(Path(dataset_dir), config, embedder, progress=progress)
    return Retriever(index, embedder, config, tracer=tracer, capture=capture, deferred=deferred)
