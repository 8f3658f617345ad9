"""Embed stage: the query's dense vector."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from searchtrace.retriever.embedding.cache import Encoder


def embed(embedder: Encoder, text: str) -> np.ndarray:
    """Unit-norm float32 vector of ``text``."""
    return embedder.encode_query(text)
