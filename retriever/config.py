"""Configuration: one frozen object per component, resolved once.

Precedence is explicit argument > environment variable > default, as in
OpenTelemetry's ``SpanLimits``. Nothing on the hot path reads ``os.environ``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping

from retriever.types import FusionMethod, Stage

ENV_HOME = "SEARCHTRACE_HOME"
ENV_QDRANT_URL = "QDRANT_URL"
ENV_QDRANT_API_KEY = "QDRANT_API_KEY"
ENV_NEO4J_URI = "NEO4J_URI"
ENV_NEO4J_USER = "NEO4J_USER"
ENV_NEO4J_PASSWORD = "NEO4J_PASSWORD"
ENV_NEO4J_DATABASE = "NEO4J_DATABASE"


def _env(name: str, environ: Mapping[str, str]) -> str | None:
    value = environ.get(name)
    return value if value else None


@dataclass(frozen=True)
class FusionConfig:
    """How stage candidate lists are fused.

    Attributes:
        method: rrf (Cormack et al. 2009, weighted), weighted (sum of min-max
            normalized scores) or keyword_then_dense.
        k0: the RRF rank constant.
        weights: per-stage weight; a missing stage weighs 1.0.
    """

    method: FusionMethod = FusionMethod.RRF
    k0: int = 60
    weights: Mapping[Stage, float] = field(
        default_factory=lambda: {Stage.DENSE: 1.0, Stage.KEYWORD: 1.0, Stage.GRAPH: 1.0}
    )

    def weight(self, stage: Stage) -> float:
        return float(self.weights.get(stage, 1.0))


@dataclass(frozen=True)
class ConfidenceConfig:
    """Band thresholds on the 0-1 relevance, and an optional fitted relevance model.

    A result is ``high`` when relevance >= ``high``, ``low`` when < ``low``,
    else ``medium``. Retry hints are given when the best score is below ``high``.
    """

    high: float = 0.65
    low: float = 0.35
    calibration_path: Path | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.low <= self.high <= 1.0:
            raise ValueError(f"need 0 <= low <= high <= 1, got low={self.low} high={self.high}")


@dataclass(frozen=True)
class GraphConfig:
    """Graph lookup parameters.

    Attributes:
        depth: default traversal depth in graph mode (1..3).
        max_hits: most triples gathered per search.
        hop_decay: a triple ``h`` hops away weighs ``hop_decay ** (h - 1)``.
        max_relation_hits: relation results appended after the chunk results.
        timeout_s: a graph call slower than this degrades the search.
    """

    depth: int = 2
    max_hits: int = 300
    hop_decay: float = 0.5
    max_relation_hits: int = 3
    timeout_s: float = 2.0


@dataclass(frozen=True)
class Neo4jSettings:
    uri: str
    user: str = "neo4j"
    password: str = ""
    database: str | None = None


@dataclass(frozen=True)
class RetrieverConfig:
    """Everything the retriever needs to know, resolved once."""

    home: Path = field(default_factory=lambda: Path.home() / ".searchtrace")
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None
    neo4j: Neo4jSettings | None = None
    fusion: FusionConfig = field(default_factory=FusionConfig)
    confidence: ConfidenceConfig = field(default_factory=ConfidenceConfig)
    graph: GraphConfig = field(default_factory=GraphConfig)

    @classmethod
    def resolve(
        cls,
        *,
        home: str | Path | None = None,
        qdrant_url: str | None = None,
        qdrant_api_key: str | None = None,
        neo4j_uri: str | None = None,
        neo4j_user: str | None = None,
        neo4j_password: str | None = None,
        neo4j_database: str | None = None,
        environ: Mapping[str, str] | None = None,
        **overrides: object,
    ) -> "RetrieverConfig":
        """Build a config: explicit argument > environment variable > default."""
        env = os.environ if environ is None else environ
        home_value = home or _env(ENV_HOME, env)
        uri = neo4j_uri or _env(ENV_NEO4J_URI, env)
        neo4j = None
        if uri:
            neo4j = Neo4jSettings(
                uri=uri,
                user=neo4j_user or _env(ENV_NEO4J_USER, env) or "neo4j",
                password=neo4j_password or _env(ENV_NEO4J_PASSWORD, env) or "",
                database=neo4j_database or _env(ENV_NEO4J_DATABASE, env),
            )
        base = cls(
            home=Path(home_value).expanduser() if home_value else Path.home() / ".searchtrace",
            qdrant_url=qdrant_url or _env(ENV_QDRANT_URL, env),
            qdrant_api_key=qdrant_api_key or _env(ENV_QDRANT_API_KEY, env),
            neo4j=neo4j,
        )
        return replace(base, **overrides) if overrides else base
