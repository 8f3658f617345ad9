"""Rerank stage: pluggable; identity by default.

A reranker takes the query and the fused list and returns a reordered (or
rescored) fused list. Plug one in with ``Retriever(..., reranker=...)``.
"""

from __future__ import annotations

from typing import Protocol

from searchtrace.retriever.types import Fused


class Reranker(Protocol):
    name: str

    def rerank(self, query: str, fused: Fused, top_k: int) -> Fused: ...


class IdentityReranker:
    """Keeps the fused order."""

    name = "identity"

    def rerank(self, query: str, fused: Fused, top_k: int) -> Fused:
        return fused
