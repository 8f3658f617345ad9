"""Keyword stage: BM25 over title + text (Qdrant sparse vectors, IDF modifier)."""

from __future__ import annotations

import numpy as np

from retriever.stages.dense import to_candidates
from retriever.types import Candidates, Stage
from retriever.vectorstore.base import PayloadFilter, VectorStore


def keyword(store: VectorStore, bm25, text: str, limit: int, doc_ids: np.ndarray,
            flt: PayloadFilter | None = None) -> Candidates:
    sparse = bm25.encode_query(text)
    if not sparse.indices:
        return Candidates.empty(Stage.KEYWORD)
    hits = store.search_sparse([sparse], limit, flt)[0]
    return to_candidates(Stage.KEYWORD, hits, doc_ids)
