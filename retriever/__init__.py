"""searchtrace's retriever: staged hybrid dense + BM25 + knowledge-graph search.

This is the package's public API: other packages (and users) import these
names and nothing else of it. Names load their module on first use, so
``import searchtrace.retriever`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchtrace._lazy import exports

if TYPE_CHECKING:
    from searchtrace.retriever.api import open_retriever
    from searchtrace.retriever.config.flags import add_retriever_arguments, config_from_arguments, show_progress
    from searchtrace.retriever.config.model import (
        ConfidenceConfig,
        DenseConfig,
        FeedbackConfig,
        FusionConfig,
        GraphConfig,
        RetrieverConfig,
    )
    from searchtrace.retriever.config.resolve import config_json, resolve_config, search_fingerprint
    from searchtrace.retriever.data.beir import Dataset, Query, dataset_fingerprint, load_dataset, load_qrels
    from searchtrace.retriever.request import SearchRequest, validate_request
    from searchtrace.retriever.response import Hit, RelationHit, Result, RetryHints, SearchResponse
    from searchtrace.retriever.search.answer import Answer, SearchDetail
    from searchtrace.retriever.search.confidence import (
        FEATURES,
        Feature,
        RelevanceModel,
        band_of,
        bands,
        load_calibration,
    )
    from searchtrace.retriever.search.pipeline import Retriever
    from searchtrace.retriever.types import FusionMethod, GraphMethod

_EXPORTS = {
    "open_retriever": "searchtrace.retriever.api",
    "add_retriever_arguments": "searchtrace.retriever.config.flags",
    "config_from_arguments": "searchtrace.retriever.config.flags",
    "show_progress": "searchtrace.retriever.config.flags",
    "FEATURES": "searchtrace.retriever.search.confidence",
    "Feature": "searchtrace.retriever.search.confidence",
    "RelevanceModel": "searchtrace.retriever.search.confidence",
    "band_of": "searchtrace.retriever.search.confidence",
    "bands": "searchtrace.retriever.search.confidence",
    "load_calibration": "searchtrace.retriever.search.confidence",
    "ConfidenceConfig": "searchtrace.retriever.config.model",
    "DenseConfig": "searchtrace.retriever.config.model",
    "FeedbackConfig": "searchtrace.retriever.config.model",
    "FusionConfig": "searchtrace.retriever.config.model",
    "GraphConfig": "searchtrace.retriever.config.model",
    "RetrieverConfig": "searchtrace.retriever.config.model",
    "Dataset": "searchtrace.retriever.data.beir",
    "Query": "searchtrace.retriever.data.beir",
    "dataset_fingerprint": "searchtrace.retriever.data.beir",
    "load_dataset": "searchtrace.retriever.data.beir",
    "load_qrels": "searchtrace.retriever.data.beir",
    "Retriever": "searchtrace.retriever.search.pipeline",
    "SearchRequest": "searchtrace.retriever.request",
    "validate_request": "searchtrace.retriever.request",
    "Hit": "searchtrace.retriever.response",
    "RelationHit": "searchtrace.retriever.response",
    "Result": "searchtrace.retriever.response",
    "RetryHints": "searchtrace.retriever.response",
    "SearchResponse": "searchtrace.retriever.response",
    "Answer": "searchtrace.retriever.search.answer",
    "SearchDetail": "searchtrace.retriever.search.answer",
    "config_json": "searchtrace.retriever.config.resolve",
    "resolve_config": "searchtrace.retriever.config.resolve",
    "search_fingerprint": "searchtrace.retriever.config.resolve",
    "FusionMethod": "searchtrace.retriever.types",
    "GraphMethod": "searchtrace.retriever.types",
}

__all__ = [
    "Answer",
    "Hit",
    "RelationHit",
    "Result",
    "RetryHints",
    "SearchResponse",
    "ConfidenceConfig",
    "Dataset",
    "DenseConfig",
    "FEATURES",
    "Feature",
    "FeedbackConfig",
    "FusionConfig",
    "FusionMethod",
    "GraphConfig",
    "GraphMethod",
    "Query",
    "RelevanceModel",
    "Retriever",
    "RetrieverConfig",
    "SearchDetail",
    "SearchRequest",
    "add_retriever_arguments",
    "band_of",
    "bands",
    "config_from_arguments",
    "config_json",
    "dataset_fingerprint",
    "load_calibration",
    "load_dataset",
    "load_qrels",
    "open_retriever",
    "resolve_config",
    "search_fingerprint",
    "show_progress",
    "validate_request",
]
__getattr__, __dir__ = exports(__name__, _EXPORTS)
