"""The enumerations every package shares: a search's stages, its modes, the confidence bands.

The retriever runs the stages, the trace vocabulary names a span after each,
the eval runner attributes lost gold documents to them and the dashboard draws
them: all read this one list.
"""

from __future__ import annotations

import enum

__all__ = ["FUSED_STAGES", "Band", "Mode", "Stage"]


class Stage(str, enum.Enum):
    """The stages every search runs through, in order (``feedback`` only when configured).

    Each stage's span is named by its value, under the root ``search`` span.
    """

    VALIDATE = "validate"
    REWRITE = "rewrite"
    EMBED = "embed"
    DENSE = "dense"
    KEYWORD = "keyword"
    GRAPH = "graph"
    FEEDBACK = "feedback"
    FUSE = "fuse"
    RERANK = "rerank"
    FILTER = "filter"
    SHAPE = "shape"


FUSED_STAGES: tuple[Stage, ...] = (Stage.DENSE, Stage.KEYWORD, Stage.GRAPH)
"""The retrieval stages whose candidate lists are fused (each with a fusion weight)."""


class Mode(str, enum.Enum):
    """``fast``: Qdrant only. ``graph``: Qdrant plus the knowledge graph."""

    FAST = "fast"
    GRAPH = "graph"


class Band(str, enum.Enum):
    """Confidence band of one result, best first.

    Which relevance falls in which band is decided in one place,
    :func:`searchtrace.retriever.band_of`.
    """

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
