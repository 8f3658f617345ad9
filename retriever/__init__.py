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
    from searchtrace.retriever.arguments import add_retriever_arguments, config_from_arguments, show_progress
    from searchtrace.retriever.confidence import FEATURES, Feature, RelevanceModel, band_of, bands, load_calibration
    from searchtrace.retriever.config import (
        ConfidenceConfig,
        DenseConfig,
        FeedbackConfig,
        FusionConfig,
        GraphConfig,
        RetrieverConfig,
    )
    from searchtrace.retriever.data.beir import Dataset, Query, dataset_fingerprint, load_dataset, load_qrels
    from searchtrace.retriever.pipeline import Retriever
    from searchtrace.retriever.request import SearchRequest, validate_request
    from searchtrace.retriever.results import Answer, SearchDetail
    from searchtrace.retriever.settings import config_json, resolve_config, search_fingerprint
    from searchtrace.retriever.types import FusionMethod, GraphMethod

_EXPORTS = {
    "open_retriever": "searchtrace.retriever.api",
    "add_retriever_arguments": "searchtrace.retriever.arguments",
    "config_from_arguments": "searchtrace.retriever.arguments",
    "show_progress": "searchtrace.retriever.arguments",
    "FEATURES": "searchtrace.retriever.confidence",
    "Feature": "searchtrace.retriever.confidence",
    "RelevanceModel": "searchtrace.retriever.confidence",
    "band_of": "searchtrace.retriever.confidence",
    "bands": "searchtrace.retriever.confidence",
    "load_calibration": "searchtrace.retriever.confidence",
    "ConfidenceConfig": "searchtrace.retriever.config",
    "DenseConfig": "searchtrace.retriever.config",
    "FeedbackConfig": "searchtrace.retriever.config",
    "FusionConfig": "searchtrace.retriever.config",
    "GraphConfig": "searchtrace.retriever.config",
    "RetrieverConfig": "searchtrace.retriever.config",
    "Dataset": "searchtrace.retriever.data.beir",
    "Query": "searchtrace.retriever.data.beir",
    "dataset_fingerprint": "searchtrace.retriever.data.beir",
    "load_dataset": "searchtrace.retriever.data.beir",
    "load_qrels": "searchtrace.retriever.data.beir",
    "Retriever": "searchtrace.retriever.pipeline",
    "SearchRequest": "searchtrace.retriever.request",
    "validate_request": "searchtrace.retriever.request",
    "Answer": "searchtrace.retriever.results",
    "SearchDetail": "searchtrace.retriever.results",
    "config_json": "searchtrace.retriever.settings",
    "resolve_config": "searchtrace.retriever.settings",
    "search_fingerprint": "searchtrace.retriever.settings",
    "FusionMethod": "searchtrace.retriever.types",
    "GraphMethod": "searchtrace.retriever.types",
}

__all__ = [
    "Answer",
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
