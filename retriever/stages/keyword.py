"""Keyword stage: BM25 over title + text (Qdrant sparse vectors, IDF modifier).

Qdrant finds the candidates (and applies the filters); their scores are then
computed again exactly (:meth:`TermStats.rank`), so that every build of the
same data ranks them the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from searchtrace.names import Stage
from searchtrace.retriever.types import Candidates
from searchtrace.retriever.vectorstore.base import PayloadFilter, VectorStore
from searchtrace.retriever.vectorstore.bm25 import Bm25Encoder
from searchtrace.retriever.vectorstore.term_stats import TermStats, rescore_limit


@dataclass(frozen=True)
class KeywordResult:
    """BM25 candidates; the largest score any document could reach for the query; the
    IDF-weighted share of the query's names that the corpus never saw."""

    candidates: Candidates
    max_score: float
    unknown_share: float = 0.0


_NAME = re.compile(r"\b[A-Z][\w'-]*|\b\w*\d\w*")


def name_words(text: str) -> list[str]:
    """Capitalized words (past the first word) and words with digits: the query's names and codes."""
    words = list(_NAME.finditer(text))
    return [m.group() for m in words if m.start() > 0 or any(ch.isdigit() for ch in m.group())]


def unknown_name_share(text: str, bm25: Bm25Encoder, stats: TermStats) -> float:
    """IDF-weighted share of the query's name tokens that no document contains.

    A question about an entity the corpus has no record of cannot be answered
    from it, however close its topic; common words are left out because a
    paraphrase legitimately uses words the corpus does not.
    """
    names = name_words(text)
    return stats.unknown_share(bm25.encode_query(" ".join(names))) if names else 0.0


def keyword(store: VectorStore, bm25: Bm25Encoder, stats: TermStats, text: str, limit: int, doc_ids: np.ndarray,
            flt: PayloadFilter | None = None) -> KeywordResult:
    sparse = bm25.encode_query(text)
    if not sparse.indices:
        return KeywordResult(Candidates.empty(Stage.KEYWORD), 0.0)
    hits = store.search_sparse([sparse], rescore_limit(limit), flt)[0]
    points, scores = stats.rank(sparse, np.fromiter((h.id for h in hits), dtype=np.int64, count=len(hits)), limit)
    return KeywordResult(Candidates(Stage.KEYWORD, doc_ids[points], scores), stats.max_score(sparse),
                         unknown_name_share(text, bm25, stats))
