"""``judge status``: how far judging has got, per query and in total.

It counts every standing judgment, whatever its kind: a pair is judged when a
judge labels it, relevant when its one grade (majority, tie to the lower)
reaches the scale's ``relevant`` grade.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from searchtrace.evals.labels.judgments.labels import pair_labels, standing
from searchtrace.evals.labels.judgments.records import Judgment, Kind, Pair
from searchtrace.evals.labels.judgments.scale import Scale

__all__ = ["QueryStatus", "Status", "judging_status"]


@dataclass(frozen=True)
class QueryStatus:
    """One query's judged pairs, how many are relevant, who judged them, its text and its pool's pairs left.

    Attributes:
        text: the query's text ("" when the dataset's ``queries.jsonl`` lacks it).
        left: pairs of the pool (``pool.jsonl``) nobody has labelled yet; None without a pool.
    """

    query_id: str
    pairs: int
    relevant: int
    judges: tuple[str, ...]
    text: str = ""
    left: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"query_id": self.query_id, "text": self.text, "pairs": self.pairs, "relevant": self.relevant,
                "left": self.left, "judges": list(self.judges)}


@dataclass(frozen=True)
class Status:
    """The judging of a dataset.

    Attributes:
        location: the store.
        queries: each query with a judged pair, sorted.
        by_kind: standing judgments of each kind.
    """

    location: str
    queries: tuple[QueryStatus, ...]
    by_kind: tuple[tuple[Kind, int], ...]

    @property
    def left(self) -> int | None:
        """The pool's pairs nobody has labelled yet (None without a pool)."""
        counts = [q.left for q in self.queries if q.left is not None]
        return sum(counts) if counts else None

    @property
    def pairs(self) -> int:
        return sum(q.pairs for q in self.queries)

    @property
    def relevant(self) -> int:
        return sum(q.relevant for q in self.queries)

    @property
    def judges(self) -> tuple[str, ...]:
        return tuple(sorted({judge for q in self.queries for judge in q.judges}))

    def to_json(self) -> dict[str, Any]:
        return {"judgments": self.location, "queries": [q.to_json() for q in self.queries],
                "totals": {"queries": len(self.queries), "pairs": self.pairs, "left": self.left, "relevant": self.relevant,
                           "judges": list(self.judges), "by_kind": {k.value: n for k, n in self.by_kind}}}


def judging_status(location: str, judgments: Sequence[Judgment], scale: Scale, *,
                   texts: Mapping[str, str] | None = None, pool: Sequence[Pair] | None = None) -> Status:
    """The status of ``judgments`` on ``scale``: each query with a judged pair or a pair of ``pool`` left.

    ``texts``: the queries' texts by id; ``pool``: the pairs to judge (None: no pool, nothing counted left).
    """
    by_query: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
    labelled: set[Pair] = set()
    for p in pair_labels(judgments):
        by_query.setdefault(p.pair[0], []).append((p.grade, p.judges))
        labelled.add(p.pair)
    left = Counter(query_id for query_id, doc_id in dict.fromkeys(pool or ()) if (query_id, doc_id) not in labelled)
    texts = texts or {}
    queries = tuple(QueryStatus(query_id, len(rows), sum(grade >= scale.relevant for grade, _ in rows),
                                tuple(sorted({judge for _, judges in rows for judge in judges})),
                                texts.get(query_id, ""), None if pool is None else left[query_id])
                    for query_id, rows in sorted({**{q: [] for q in left}, **by_query}.items()))
    kinds = Counter(j.kind for j in standing(judgments).values())
    return Status(location, queries, tuple((kind, kinds[kind]) for kind in Kind))
