"""Open a ready-to-search retriever on a dataset folder in one call."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from searchtrace.retriever.config import RetrieverConfig
from searchtrace.retriever.index import ensure_index
from searchtrace.retriever.pipeline import Retriever
from searchtrace.retriever.settings import resolve_config
from searchtrace.traces import vocabulary

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer

    from searchtrace.retriever.embedding import Encoder
    from searchtrace.traces import CaptureConfig, DeferredAttributes


def open_retriever(dataset_dir: str | Path, config: RetrieverConfig | None = None, *,
                   embedder: Encoder | None = None, progress: bool = True, tracer: Tracer | None = None,
                   capture: CaptureConfig | None = None, deferred: DeferredAttributes | None = None,
                   source: vocabulary.Source | None = None) -> Retriever:
    """Index the dataset if needed (content-addressed) and return a Retriever on it.

    Args:
        dataset_dir: a BEIR-layout dataset folder.
        config: the retriever's configuration (default: flags-free ``resolve_config()``).
        embedder: the text encoder (default: all-MiniLM-L6-v2, loaded on first use).
        progress: show progress bars while indexing.
        tracer, capture, deferred, source: tracing (see :class:`Retriever`); ``source`` default python.
    """
    from searchtrace.retriever.embedding import Embedder

    config = config or resolve_config()
    embedder = embedder or Embedder()
    index = ensure_index(Path(dataset_dir), config, embedder, progress=progress)
    return Retriever(index, embedder, config, tracer=tracer, capture=capture, deferred=deferred,
                     source=source or vocabulary.Source.PYTHON)
