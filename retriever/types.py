"""Records passed between retrieval stages.

Stages exchange frozen records and parallel numpy arrays, never loose dicts:
dicts exist only at the JSON boundary (``retriever.response``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np

from searchtrace.names import Stage


class ComponentType(str, enum.Enum):
    """What a result is: a passage (``chunk``) or a knowledge-graph triple (``relation``)."""

    CHUNK = "chunk"
    RELATION = "relation"


class FusionMethod(str, enum.Enum):
    """How the candidate lists of dense, keyword and graph are combined.

    ``rrf`` ranks only; ``dbsf``, ``zscore`` and ``weighted`` (min-max) sum
    normalized scores; ``keyword_then_dense`` reorders the keyword list by cosine.
    """

    DBSF = "dbsf"
    RRF = "rrf"
    ZSCORE = "zscore"
    WEIGHTED = "weighted"
    KEYWORD_THEN_DENSE = "keyword_then_dense"


class GraphMethod(str, enum.Enum):
    """How the graph stage scores documents from the query's entities.

    ``ppr``: personalized PageRank over the entity graph around them (HippoRAG);
    ``expand``: the triples within ``depth`` hops, hop-decayed (breadth-first).
    """

    PPR = "ppr"
    EXPAND = "expand"


class ShownOrder(str, enum.Enum):
    """How a search's results are ordered, and so what relevance each shows: never more than the one above.

    ``fused``: the fused (reranked) order; each result shows the smallest relevance at or above its place
    (a running minimum), so a weaker result never sits above a stronger-looking one. ``relevance``: ordered
    by relevance itself (ties in fused order); each shows its own.
    """

    FUSED = "fused"
    RELEVANCE = "relevance"


@dataclass(frozen=True, slots=True)
class Document:
    """One passage of a corpus, as loaded from ``corpus.jsonl``."""

    id: str
    title: str
    text: str
    collection: str = ""
    tags: tuple[str, ...] = ()
    language: str = "en"
    url: str = ""
    timestamp: str = ""  # ISO 8601, empty when unknown

    @property
    def content(self) -> str:
        return f"{self.title}\n{self.text}" if self.title else self.text


@dataclass(frozen=True, slots=True)
class Triple:
    """A subject-relation-object fact and the document it was extracted from."""

    subject: str
    relation: str
    object: str
    doc_id: str

    def key(self) -> tuple[str, str, str, str]:
        return (self.subject, self.relation, self.object, self.doc_id)


@dataclass(frozen=True, slots=True)
class Entity:
    """A graph node: canonical display name, normalized key and aliases."""

    key: str
    name: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GraphHit:
    """A triple reached from a query entity, ``hops`` edges away (1..3)."""

    triple: Triple
    hops: int
    seed: str  # key of the query entity it was reached from


@dataclass(frozen=True)
class Candidates:
    """A ranked candidate list from one stage: parallel arrays, best first.

    Attributes:
        stage: the stage that produced the list.
        ids: document ids (``numpy`` object array of ``str``).
        scores: the stage's raw scores, descending.
    """

    stage: Stage
    ids: np.ndarray
    scores: np.ndarray

    def __post_init__(self) -> None:
        if len(self.ids) != len(self.scores):
            raise ValueError(f"{self.stage.value}: {len(self.ids)} ids but {len(self.scores)} scores")

    @classmethod
    def empty(cls, stage: Stage) -> Candidates:
        return cls(stage, np.empty(0, dtype=object), np.empty(0, dtype=np.float64))

    @classmethod
    def from_pairs(cls, stage: Stage, pairs: list[tuple[str, float]]) -> Candidates:
        ids = np.array([p[0] for p in pairs], dtype=object)
        scores = np.array([p[1] for p in pairs], dtype=np.float64)
        return cls(stage, ids, scores)

    def __len__(self) -> int:
        return len(self.ids)

    def head(self, n: int) -> Candidates:
        return Candidates(self.stage, self.ids[:n], self.scores[:n])

    def rank_of(self) -> dict[str, int]:
        """1-based rank of every id."""
        return {doc_id: i + 1 for i, doc_id in enumerate(self.ids)}


@dataclass(frozen=True)
class Fused:
    """The fused list: ids best first, fused scores and each stage's raw score.

    ``components[stage]`` holds the stage's raw score for each id (NaN where the
    stage did not retrieve it) and ``ranks[stage]`` its 1-based rank (0 = absent).
    """

    ids: np.ndarray
    scores: np.ndarray
    components: dict[Stage, np.ndarray] = field(default_factory=dict)
    ranks: dict[Stage, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)

    def take(self, index: np.ndarray) -> Fused:
        """A new Fused holding the rows at ``index``, in that order."""
        return Fused(
            self.ids[index],
            self.scores[index],
            {s: a[index] for s, a in self.components.items()},
            {s: a[index] for s, a in self.ranks.items()},
        )
