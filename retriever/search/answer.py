"""What one search gives an evaluation: the response, every stage's candidates and the full ranking."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from searchtrace.errors import SearchtraceError
from searchtrace.names import Band
from searchtrace.retriever.response import SearchResponse

__all__ = ["Answer", "SearchDetail"]


@dataclass(frozen=True)
class SearchDetail:
    """What an evaluation needs beyond the response.

    Attributes:
        stage_ids: each retrieval stage's candidate ids, best first.
        fused_ids: the fused (and reranked) list, before any filter.
        dropped_ids: ids the filter stage removed.
        ranking: the kept ids in final order (deeper than top_k: up to all candidates).
        ranking_scores: fused scores of ``ranking``.
        relevance: relevance (0-1) of ``ranking``.
        bands: the confidence band of each of ``ranking`` (the response's bands, deeper).
        features: relevance-model features of ``ranking`` (rows x columns in ``confidence.Feature`` order).
    """

    stage_ids: dict[str, tuple[str, ...]]
    fused_ids: tuple[str, ...]
    dropped_ids: tuple[str, ...]
    ranking: tuple[str, ...]
    ranking_scores: tuple[float, ...]
    relevance: tuple[float, ...]
    bands: tuple[Band, ...]
    features: np.ndarray


class Answer(NamedTuple):
    """One search of a batch (:meth:`Retriever.search_many`): its response, or the error it raised.

    Attributes:
        response: the response (None for an error).
        detail: what an evaluation needs (None for an error, or when not asked for).
        ms: the search's wall time as its caller saw it, in milliseconds.
        error: the error the search raised, if it did.
    """

    response: SearchResponse | None
    detail: SearchDetail | None
    ms: float
    error: SearchtraceError | None = None

    @classmethod
    def timed(cls, search: Callable[[], tuple[SearchResponse, SearchDetail | None]]) -> Answer:
        """Run one search of a batch, timed: its answer, or the error it raised (the batch goes on)."""
        started = time.perf_counter()
        try:
            response, detail = search()
        except SearchtraceError as exc:
            return cls(None, None, (time.perf_counter() - started) * 1000, exc)
        return cls(response, detail, (time.perf_counter() - started) * 1000)
