"""Open a ready-to-search retriever on a dataset folder in one call."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from searchtrace.retriever.config.model import RetrieverConfig
from searchtrace.retriever.config.resolve import resolve_config
from searchtrace.retriever.embedding.encoder import Loadable
from searchtrace.retriever.index import ensure_index
from searchtrace.retriever.search import cold
from searchtrace.retriever.search.pipeline import Retriever
from searchtrace.traces import vocabulary as v

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer

    from searchtrace.retriever.embedding.cache import Encoder
    from searchtrace.traces import CaptureConfig, DeferredAttributes


def open_retriever(dataset_dir: str | Path, config: RetrieverConfig | None = None, *,
                   embedder: Encoder | None = None, progress: bool = True, tracer: Tracer | None = None,
                   capture: CaptureConfig | None = None, deferred: DeferredAttributes | None = None,
                   source: v.Source | None = None) -> Retriever:
    """Index the dataset if needed (content-addressed) and return a Retriever on it.

    Args:
        dataset_dir: a BEIR-layout dataset folder.
        config: the retriever's configuration (default: flags-free ``resolve_config()``).
        embedder: the text encoder (default: all-MiniLM-L6-v2 on ONNX Runtime); its model is loaded
            here, before any search (:func:`warm_up`).
        progress: show progress bars while indexing.
        tracer, capture, deferred, source: tracing (see :class:`Retriever`); ``source`` default python.
    """
    from searchtrace.retriever.embedding.cache import Embedder

    config = config or resolve_config()
    embedder = embedder or Embedder(config.home, config.precision)
    warm_up(embedder, tracer)
    index = ensure_index(Path(dataset_dir), config, embedder, progress=progress)
    return Retriever(index, embedder, config, tracer=tracer, capture=capture, deferred=deferred,
                     source=source or v.Source.PYTHON)


def warm_up(embedder: object, tracer: Tracer | None = None) -> None:
    """Load the embedder's model now, before any search, in a span of its own when traced; the next
    search this process runs is then its cold one (:mod:`retriever.search.cold`).

    An embedder without a ``load`` method (a test double), or one this process has
    loaded already (nothing to load, so no span), is left alone.
    """
    if not isinstance(embedder, Loadable) or getattr(embedder, "loaded", False) is True:
        return
    if tracer is None:
        embedder.load()
        cold.PROCESS.loaded()
        return
    with tracer.start_as_current_span(v.EMBEDDER_LOAD_SPAN,
                                      attributes={v.EMBEDDING_MODEL_NAME: getattr(embedder, "model_id", "unknown")}) as span:
        info = embedder.load()
        span.set_attribute(v.EMBEDDER_BUILT, bool(getattr(info, "built", False)))
        identity = getattr(embedder, "identity", None)
        if isinstance(identity, str):
            span.set_attribute(v.EMBEDDER_IDENTITY, identity)
    cold.PROCESS.loaded()
