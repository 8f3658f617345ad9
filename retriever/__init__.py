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
    from searchtrace.retriever.data.beir import (
        QRELS_HEADER,
        SPLIT_NAME,
        Dataset,
        Query,
        dataset_fingerprint,
        dataset_name,
        load_corpus,
        load_dataset,
        load_qrels,
        load_queries,
    )
    from searchtrace.retriever.index import DamagedIndex, read_manifest
    from searchtrace.retriever.request import (
        DEFAULT_CANDIDATES,
        DEFAULT_TOP_K,
        FORMER_MAX_TOP_K,
        MAX_CANDIDATES,
        MAX_TOP_K,
        MAX_TOP_K_FIELD,
        SearchRequest,
        validate_request,
    )
    from searchtrace.retriever.response import (
        Hit,
        Ranking,
        RelationHit,
        Result,
        RetryHints,
        SearchResponse,
        Triple,
    )
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

__getattr__, __dir__, __all__ = exports(__name__, __file__)
