"""Stage attribution: for every gold document, where it was found and where it was lost.

For each (query, gold document) the record says which retrieval stages had it
among their candidates, its rank in the fused list, whether the filter stage
dropped it, and its final rank. ``lost_at`` classifies it:

* ``found``: final rank <= k;
* ``ranked_out``: fused, kept by the filter, but ranked below k;
* ``filtered``: dropped by the filter stage;
* ``not_retrieved``: no stage had it among its candidates.

Another retriever's traces (``eval --from-traces``) have stages of their own, in order: its retriever span's
documents, then each reranker span's output. :func:`follow` says at which of them each gold document was lost.
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
    fused_rank = dict(zip(fused_ids, range(1, len(fused_ids) + 1)))  # a repeated id: its last rank
    final_rank = dict(zip(ranking, range(1, len(ranking) + 1)))
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


FOUND, RANKED_OUT, NOT_RETRIEVED = LostAt.FOUND.value, LostAt.RANKED_OUT.value, LostAt.NOT_RETRIEVED.value


@dataclass(frozen=True)
class StageFate:
    """Where one gold document went through another retriever's stages, in order (its retriever, then each
    reranker): its rank in each stage's output (None: not there), and ``lost_at``: ``found`` (in the last
    stage's top k), ``ranked_out`` (kept to the end, below k), ``not_retrieved`` (not in the first stage's
    output) or the name of the first stage that dropped it."""

    query_id: str
    doc_id: str
    grade: int
    ranks: tuple[int | None, ...]
    lost_at: str


def follow(query_id: str, gold: Mapping[str, int], stages: Sequence[tuple[str, Sequence[str]]],
           k: int) -> list[StageFate]:
    """One :class:`StageFate` per relevant (grade > 0) document of the query; ``stages``: (name, the ids it
    output, best first), the first the retriever's."""
    ranks_of = [{d: i + 1 for i, d in enumerate(ids)} for _, ids in stages]
    out = []
    for doc, grade in sorted(gold.items()):
        if grade <= 0:
            continue
        ranks = tuple(r.get(doc) for r in ranks_of)
        if not ranks or ranks[0] is None:
            lost = NOT_RETRIEVED
        elif None in ranks:
            lost = stages[ranks.index(None)][0]
        else:
            last = ranks[-1]
            lost = FOUND if last is not None and last <= k else RANKED_OUT
        out.append(StageFate(query_id, doc, grade, ranks, lost))
    return out


def fates_summary(fates: Sequence[StageFate]) -> dict[str, int]:
    """How many gold documents ended each way: ``found``, ``ranked_out``, ``not_retrieved`` and each stage that
    dropped some, in that order."""
    counts = Counter(f.lost_at for f in fates)
    fixed = (FOUND, RANKED_OUT, NOT_RETRIEVED)
    return {**{k: counts.get(k, 0) for k in fixed}, **{k: n for k, n in counts.items() if k not in fixed}}
