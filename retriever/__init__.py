"""searchtrace's retriever: staged hybrid dense + BM25 + knowledge-graph search.

Names are imported lazily (PEP 562) so ``import retriever.config`` stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "open_retriever": "retriever.api",
    "Retriever": "retriever.pipeline",
    "RetrieverConfig": "retriever.config",
    "ConfidenceConfig": "retriever.config",
    "FusionConfig": "retriever.config",
    "GraphConfig": "retriever.config",
    "SearchRequest": "retriever.request",
    "validate_request": "retriever.request",
    "SearchtraceError": "retriever.errors",
    "ValidationError": "retriever.errors",
    "NotFoundError": "retriever.errors",
    "BackendUnavailable": "retriever.errors",
    "DataError": "retriever.errors",
    "ErrorCode": "retriever.errors",
    "Band": "retriever.types",
    "FusionMethod": "retriever.types",
    "Mode": "retriever.types",
    "Stage": "retriever.types",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'retriever' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
