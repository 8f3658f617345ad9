"""Stage attribution: for every gold document, where it was found and where it was lost.

For each (query, gold document) the record says which retrieval stages had it
among their candidates, its rank in the fused list, whether the filter stage
dropped it, and its final rank. ``lost_at`` classifies it:

* ``found``: final rank <= k;
* ``ranked_out``: fused, kept by the filter, but ranked below k;
* ``filtered``: dropped by the filter stage;
* ``not_retrieved``: no stage had it among its candidates.
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence


class LostAt(str, enum.Enum):
    FOUND = "found"
    RANKED_OUT = "ranked_out"
    FILTERED = "filtered"
    NOT_RETRIEVED = "not_retrieved"


@dataclass(frozen=True)
class GoldTrace:
    """Where one gold document went during one search."""

    query_id: str
    doc_id: str
    grade: int
    stages: tuple[str, ...]
    fused_rank: int | None
    filtered: bool
    final_rank: int | None
    lost_at: LostAt


def attribute(query_id: str, gold: Mapping[str, int], stage_ids: Mapping[str, Sequence[str]],
              fused_ids: Sequence[str], dropped_ids: Iterable[str], ranking: Sequence[str], k: int) -> list[GoldTrace]:
    """One :class:`GoldTrace` per relevant (grade > 0) document of the query."""
    stage_sets = {s: set(ids) for s, ids in stage_ids.items()}
    fused_rank = {d: i + 1 for i, d in enumerate(fused_ids)}
    final_rank = {d: i + 1 for i, d in enumerate(ranking)}
    dropped = set(dropped_ids)
    out = []
    for doc, grade in sorted(gold.items()):
        if grade <= 0:
            continue
        stages = tuple(s for s in sorted(stage_sets) if doc in stage_sets[s])
        rank = final_rank.get(doc)
        if rank is not None and rank <= k:
            lost = LostAt.FOUND
        elif doc in dropped:
            lost = LostAt.FILTERED
        elif doc in fused_rank:
            lost = LostAt.RANKED_OUT
        else:
            lost = LostAt.NOT_RETRIEVED
        out.append(GoldTrace(query_id, doc, grade, stages, fused_rank.get(doc), doc in dropped, rank, lost))
    return out


def summarize(traces: Sequence[GoldTrace], stages: Sequence[str]) -> dict:
    """Candidate recall per stage (and of their union) and the lost-at breakdown."""
    n = len(traces)
    recall = {s: (sum(s in t.stages for t in traces) / n if n else 0.0) for s in stages}
    recall["any"] = sum(bool(t.stages) for t in traces) / n if n else 0.0
    lost = Counter(t.lost_at.value for t in traces)
    return {
        "gold_documents": n,
        "candidate_recall": recall,
        "lost_at": {k.value: lost.get(k.value, 0) for k in LostAt},
    }
