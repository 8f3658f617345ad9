"""An index ready to search: built if missing, rebuilt if damaged, opened."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from searchtrace.notices import tell
from searchtrace.retriever.config.model import RetrieverConfig
from searchtrace.retriever.data.beir import load_dataset
from searchtrace.retriever.index.build import build_index
from searchtrace.retriever.index.keys import locate
from searchtrace.retriever.index.manifest import DamagedIndex
from searchtrace.retriever.index.opening import OpenIndex, open_index

if TYPE_CHECKING:
    from searchtrace.retriever.embedding.cache import Encoder

__all__ = ["ensure_index"]

log = logging.getLogger(__name__)


def ensure_index(dataset_dir: Path, config: RetrieverConfig, embedder: Encoder, *, progress: bool = True,
                 force: bool = False) -> OpenIndex:
    """Open the dataset's index, building it first when it is missing (or ``force``).

    A damaged index is rebuilt from the embedding cache (content-addressed, so
    nothing is embedded twice), once, with a notice naming what was wrong (a line on stderr from the command line).

    Raises:
        DamagedIndex: it is still damaged after the rebuild (or cannot be rebuilt: a read-only home).
    """
    where = locate(dataset_dir, config, embedder.model_id)
    if force or not (where.path / "manifest.json").exists():
        build_index(load_dataset(dataset_dir, need_queries=False), config, embedder, progress=progress, force=force)
        return open_index(where.path, config)
    try:
        return open_index(where.path, config)
    except DamagedIndex as exc:
        tell(log, f"warning: {exc.message.split('; rebuild')[0]}; rebuilding it from the embedding cache")
    build_index(load_dataset(dataset_dir, need_queries=False), config, embedder, progress=progress, force=True)
    return open_index(where.path, config)
