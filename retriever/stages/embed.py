"""Embed stage: the query's dense vector."""

from __future__ import annotations

import numpy as np


def embed(embedder, text: str) -> np.ndarray:
    """Unit-norm float32 vector of ``text``."""
    return embedder.encode_query(text)
