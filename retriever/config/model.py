"""Configuration: one frozen object per component, validated on construction.

:func:`searchtrace.retriever.config.resolve.resolve_config` builds a
:class:`RetrieverConfig` once, explicit argument > settings file > environment
variable > default, as OpenTelemetry's ``SpanLimits`` does. Nothing on the hot
path reads ``os.environ``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from searchtrace.errors import ValidationError
from searchtrace.home import DEFAULT_HOME, Home
from searchtrace.names import FUSED_STAGES, Stage
from searchtrace.retriever.embedding.encoder import Precision
from searchtrace.retriever.types import FusionMethod, GraphMethod, ShownOrder


def _default_weights() -> dict[Stage, float]:
    return {Stage.DENSE: 1.0, Stage.KEYWORD: 1.0, Stage.GRAPH: 1.0}


def _finite_at_least(value: object, low: float) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value >= low)


RRF_K0 = 60
"""RRF's rank constant k, the default of ``FusionConfig.k0`` (Cormack, Clarke and Buettcher 2009 chose 60)."""


@dataclass(frozen=True)
class FusionConfig:
    """How stage candidate lists are fused.

    Attributes:
        method: dbsf (default: distribution-based score fusion), rrf (Cormack et
            al. 2009, weighted), zscore, weighted (min-max) or keyword_then_dense;
            see ``retriever.stages.fuse``.
        k0: the RRF rank constant.
        weights: per-stage weight (dense, keyword, graph); a missing stage weighs
            1.0 and a weight of 0 skips the stage entirely (dense 0 = keyword only,
            keyword 0 = dense only, graph 0 = no graph lookup).
    """

    method: FusionMethod = FusionMethod.DBSF
    k0: int = RRF_K0
    weights: Mapping[Stage, float] = field(default_factory=_default_weights)

    def __post_init__(self) -> None:
        problems = []
        if isinstance(self.k0, bool) or not isinstance(self.k0, int) or self.k0 < 1:
            problems.append(f"fusion k0 must be an integer >= 1, got {self.k0!r}")
        for stage, w in self.weights.items():
            if stage not in FUSED_STAGES:
                problems.append(f"fusion weight for {getattr(stage, 'value', stage)!r}: allowed stages "
                                f"{', '.join(s.value for s in FUSED_STAGES)}")
            elif not _finite_at_least(w, 0.0):
                problems.append(f"fusion weight {stage.value} must be a number >= 0, got {w!r}")
        if not problems and not (self.enabled(Stage.DENSE) or self.enabled(Stage.KEYWORD)):
            problems.append("fusion weights: dense and keyword cannot both be 0")
        if not problems and self.method is FusionMethod.KEYWORD_THEN_DENSE and not self.enabled(Stage.KEYWORD):
            problems.append("fusion method keyword_then_dense needs a keyword weight > 0")
        if problems:
            raise ValidationError("; ".join(problems), field="fusion")

    def weight(self, stage: Stage) -> float:
        return float(self.weights.get(stage, 1.0))

    def enabled(self, stage: Stage) -> bool:
        """False when the stage's weight is 0: the pipeline then skips it."""
        return self.weight(stage) > 0.0


@dataclass(frozen=True)
class DenseConfig:
    """How a passage's dense score is made (``retriever.parts``, ``retriever.stages.dense``).

    Attributes:
        parts: index time: also embed each passage's title and sentences into the
            ``parts`` multivector (about 2-3x the embedding work of the passages alone).
        max_parts: index time: parts kept per passage.
        parts_weight: search time: the dense score is ``(1 - w) * cos(passage) +
            w * max cos(part)``; 0 uses the passage vector alone (as does an index
            built without parts).
        parts_depth: search time: the nearest ``parts_depth`` x candidates passages
            (by their own vector) are rescored so, and the best candidates kept.
    """

    parts: bool = True
    max_parts: int = 64
    parts_weight: float = 0.5
    parts_depth: int = 2

    def __post_init__(self) -> None:
        problems = []
        if not isinstance(self.parts, bool):
            problems.append(f"dense parts must be true or false, got {self.parts!r}")
        if isinstance(self.max_parts, bool) or not isinstance(self.max_parts, int) or not 1 <= self.max_parts <= 1024:
            problems.append(f"dense max_parts must be an integer 1-1024, got {self.max_parts!r}")
        if isinstance(self.parts_depth, bool) or not isinstance(self.parts_depth, int) or not 1 <= self.parts_depth <= 10:
            problems.append(f"dense parts_depth must be an integer 1-10, got {self.parts_depth!r}")
        if not _finite_at_least(self.parts_weight, 0.0) or self.parts_weight > 1:
            problems.append(f"dense parts_weight must be a number 0-1, got {self.parts_weight!r}")
        if problems:
            raise ValidationError("; ".join(problems), field="dense")


@dataclass(frozen=True)
class FeedbackConfig:
    """Dense pseudo-relevance feedback (Rocchio 1971), off by default.

    With ``docs`` > 0 the dense search runs a second time with the query vector
    ``q + weight * mean(top docs of the first fused list)``, and the lists are
    fused again. It helps SciFact a little and hurts multi-hop MuSiQue, where the
    gold passages are about different things (see BENCHMARKS.md).

    Attributes:
        docs: feedback documents (0 = off).
        weight: Rocchio's beta, the weight of their mean vector.
    """

    docs: int = 0
    weight: float = 0.5

    def __post_init__(self) -> None:
        problems = []
        if isinstance(self.docs, bool) or not isinstance(self.docs, int) or not 0 <= self.docs <= 50:
            problems.append(f"feedback docs must be an integer 0-50, got {self.docs!r}")
        if not _finite_at_least(self.weight, 0.0):
            problems.append(f"feedback weight must be a number >= 0, got {self.weight!r}")
        if problems:
            raise ValidationError("; ".join(problems), field="feedback")

    @property
    def enabled(self) -> bool:
        return self.docs > 0 and self.weight > 0


@dataclass(frozen=True)
class ConfidenceConfig:
    """Band thresholds on the 0-1 relevance, and an optional fitted relevance model.

    A result is ``high`` when relevance >= ``high``, ``low`` when < ``low``,
    else ``medium``. Retry hints are given when the best score is below ``high``.
    ``order`` decides the results' order and so their shown relevance (:class:`ShownOrder`):
    relevance never increases down a response.
    """

    high: float = 0.65
    low: float = 0.35
    calibration_path: Path | None = None
    order: ShownOrder = ShownOrder.FUSED

    def __post_init__(self) -> None:
        if not 0.0 <= self.low <= self.high <= 1.0:
            raise ValidationError(f"confidence thresholds: need 0 <= low <= high <= 1, got low={self.low} "
                                  f"high={self.high}", field="confidence")


@dataclass(frozen=True)
class GraphConfig:
    """Graph lookup parameters.

    Attributes:
        method: ppr (personalized PageRank over the triples around the query's
            entities, HippoRAG) or expand (hop-decayed triple expansion).
        depth: default traversal depth in graph mode (1..3): the subgraph PPR runs on.
        max_hits: most triples gathered per search.
        damping: PPR's probability of following an edge rather than restarting
            at the seeds (HippoRAG uses 0.5).
        unnamed_seed_weight: a detected entity the query does not write as a
            name (no capitalized word past the first, no digit: "country",
            "author") seeds PPR with this factor of its weight.
        hop_decay: expand: a triple ``h`` hops away weighs ``hop_decay ** (h - 1)``.
        max_relation_hits: most facts a response shows; they take top_k places by relevance.
        timeout_s: a graph call slower than this degrades the search.
        seed_docs: ppr: the entities of this many best passages of a first pass
            (the dense and keyword lists fused) seed the walk beside the query's
            own, so a multi-hop question reaches past the bridge entity its
            first-hop passage names (0 = the query's entities only).
        seed_docs_weight: their share of the restart mass, relative to the
            query's entities (which together weigh 1).
    """

    method: GraphMethod = GraphMethod.PPR
    depth: int = 2
    max_hits: int = 300
    damping: float = 0.5
    unnamed_seed_weight: float = 0.1
    hop_decay: float = 0.5
    max_relation_hits: int = 3
    timeout_s: float = 2.0
    seed_docs: int = 1
    seed_docs_weight: float = 0.5

    def __post_init__(self) -> None:
        problems = []
        for name, low, high in (("depth", 1, 3), ("max_hits", 1, 100_000), ("max_relation_hits", 0, 50),
                                ("seed_docs", 0, 20)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                problems.append(f"graph {name} must be an integer {low}-{high}, got {value!r}")
        for name, lowest, highest in (("damping", 0.0, 0.95), ("unnamed_seed_weight", 0.0, 1.0),
                                      ("hop_decay", 0.0, 1.0), ("seed_docs_weight", 0.0, 10.0)):
            number = getattr(self, name)
            if not _finite_at_least(number, lowest) or number > highest:
                problems.append(f"graph {name} must be a number {lowest}-{highest}, got {number!r}")
        if not _finite_at_least(self.timeout_s, 0.0) or self.timeout_s == 0:
            problems.append(f"graph timeout_s must be a number > 0, got {self.timeout_s!r}")
        if problems:
            raise ValidationError("; ".join(problems), field="graph")


@dataclass(frozen=True)
class Neo4jSettings:
    uri: str
    user: str = "neo4j"
    password: str = ""
    database: str | None = None


@dataclass(frozen=True)
class RetrieverConfig:
    """Everything the retriever needs to know, resolved once (see ``settings.resolve_config``).

    Attributes:
        home: the home folder (indexes, embedding cache, trace store).
        qdrant_url: a Qdrant server; None = the embedded Qdrant Edge shard.
        qdrant_api_key: the server's API key.
        qdrant_shards, qdrant_replication: a collection's layout on a cluster (None = the server's default).
        neo4j: a Neo4j server; None = the in-process graph.
        precision: the embedder's weights, fp32 (default) or int8 (its own index and cache entries).
        dense, fusion, feedback, confidence, graph: the search settings.
    """

    home: Home = field(default_factory=lambda: Home(Path(DEFAULT_HOME)))
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None
    qdrant_shards: int | None = None  # collection layout on a cluster; None = the server's default
    qdrant_replication: int | None = None
    neo4j: Neo4jSettings | None = None
    precision: Precision = Precision.FP32
    dense: DenseConfig = field(default_factory=DenseConfig)
    fusion: FusionConfig = field(default_factory=FusionConfig)
    feedback: FeedbackConfig = field(default_factory=FeedbackConfig)
    confidence: ConfidenceConfig = field(default_factory=ConfidenceConfig)
    graph: GraphConfig = field(default_factory=GraphConfig)
