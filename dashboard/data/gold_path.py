"""Where each gold document went, stage by stage, and the stage that lost it, in words.

The eval's attribution (:mod:`searchtrace.evals.scoring.attribution`) already
decides *whether* a gold document was lost and how (``not_retrieved``,
``filtered``, ``ranked_out``), from the full lists the search kept; this module
does not decide that again. It reads the ranks the trace recorded at each stage
to say *which* ranking stage pushed a ``ranked_out`` document below the cut:
the last stage that took it from within the cut to below it, or, when no stage
ever ranked it within the cut, the retrieval stage that ranked it best.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from searchtrace.dashboard.data.query_context import TraceContext
from searchtrace.evals import GoldTrace, LostAt
from searchtrace.names import Stage

__all__ = ["GOLD_PATH_COLUMNS", "RANKING_STAGES", "RETRIEVAL_STAGES", "gold_paths", "lost_words"]

#: Stages that retrieve candidates, each a ranked list of its own (``feedback`` only when configured).
RETRIEVAL_STAGES = tuple(s.value for s in (Stage.DENSE, Stage.KEYWORD, Stage.GRAPH, Stage.FEEDBACK))
#: Every stage a gold document has a rank at, in pipeline order (``embed`` makes a vector and ranks nothing).
RANKING_STAGES = (*RETRIEVAL_STAGES, *(s.value for s in (Stage.FUSE, Stage.RERANK, Stage.FILTER, Stage.SHAPE)))
GOLD_PATH_COLUMNS = ("doc_id", "grade", *RANKING_STAGES, "final_rank", "lost_stage", "where")


@dataclass(frozen=True)
class _Step:
    """A rank at one stage; ``rank`` None: the document was not within what the stage kept or recorded."""

    stage: str
    rank: int | None


def _rank(ids: Sequence[str], doc_id: str) -> int | None:
    return ids.index(doc_id) + 1 if doc_id in ids else None


def _cell(trace: TraceContext, stage: str, gold: GoldTrace) -> str:
    """What the table shows at ``stage``: the rank, ``—`` (not in the list), ``> N`` (beyond the N recorded)."""
    ids = trace.ranked[stage]
    rank = _rank(ids, gold.doc_id)
    if rank is not None:
        return str(rank)
    listed = stage in gold.stages or (stage in (Stage.FUSE.value, Stage.RERANK.value) and gold.fused_rank)
    return f"> {len(ids)}" if listed and len(ids) < trace.candidate_counts.get(stage, len(ids) + 1) else "—"


def _steps(gold: GoldTrace, trace: TraceContext | None) -> list[_Step]:
    """The document's ranks down the pipeline: its best retrieval rank, the fusion's, the reranker's, the final."""
    steps = []
    if trace is not None:
        ranked = [(s, _rank(trace.ranked[s], gold.doc_id)) for s in RETRIEVAL_STAGES if s in trace.ranked]
        found = [(r, s) for s, r in ranked if r is not None]
        if found:
            rank, stage = min(found)
            steps.append(_Step(stage, rank))
        if Stage.FUSE.value in trace.ranked:
            steps.append(_Step(Stage.FUSE.value, _rank(trace.ranked[Stage.FUSE.value], gold.doc_id)))
    # the attribution's fused rank is taken after the reranker (the fusion's when no trace says more)
    after = Stage.RERANK.value if trace is not None and Stage.RERANK.value in trace.ranked else Stage.FUSE.value
    steps.append(_Step(after, gold.fused_rank))
    steps.append(_Step(Stage.FILTER.value, gold.final_rank))
    return steps


def _at(rank: int | None, depth: int) -> str:
    return str(rank) if rank is not None else f"not in the first {depth}"


def lost_words(gold: GoldTrace, trace: TraceContext | None, k: int, depth: int) -> tuple[str, str]:
    """The stage that lost ``gold`` (empty when it was found) and a sentence saying so.

    Args:
        trace: what the search's trace recorded (None: the attribution alone speaks).
        k: the cut a gold document counts as found within (the run's ``attribution_k``).
        depth: how deep the run kept each ranking.
    """
    if gold.lost_at is LostAt.FOUND:
        return "", f"found: rank {gold.final_rank}, within the cut of {k}"
    if gold.lost_at is LostAt.NOT_RETRIEVED:
        ran = [s for s in RETRIEVAL_STAGES if trace is not None and s in trace.ranked]
        who = f" ({', '.join(ran)})" if ran else ""
        return "retrieval", f"not retrieved: no retrieval stage{who} returned it"
    if gold.lost_at is LostAt.FILTERED:
        return Stage.FILTER.value, f"lost at filter: dropped from rank {gold.fused_rank} by the request's filters"
    steps = _steps(gold, trace)
    within = [s.rank is not None and s.rank <= k for s in steps]
    for i in range(len(steps) - 1, 0, -1):
        if within[i - 1] and not within[i]:
            before, after = steps[i - 1], steps[i]
            at = f" at {before.stage}" if before.stage in RETRIEVAL_STAGES else ""
            return after.stage, (f"lost at {after.stage}: rank {before.rank}{at} → {_at(after.rank, depth)}, "
                                 f"below the cut of {k}")
    best = steps[0]
    final = f"; final rank {_at(gold.final_rank, depth)}"
    if best.stage in RETRIEVAL_STAGES:
        return "retrieval", (f"lost at retrieval: its best rank, {best.rank} at {best.stage}, is below the cut "
                             f"of {k}{final}")
    return best.stage, f"lost at {best.stage}: rank {_at(best.rank, depth)}, below the cut of {k}{final}"


def _row(gold: GoldTrace, trace: TraceContext | None, k: int, depth: int) -> dict[str, object]:
    cells: dict[str, object] = dict.fromkeys(RANKING_STAGES)
    if trace is not None:
        cells |= {s: _cell(trace, s, gold) for s in RANKING_STAGES if s in trace.ranked}
        cells[Stage.SHAPE.value] = str(_rank(trace.shown, gold.doc_id) or "—") if trace.shown else None
        cells[Stage.FILTER.value] = ("dropped" if gold.filtered else "—" if gold.fused_rank is None
                                     else _at(gold.final_rank, depth))
    stage, where = lost_words(gold, trace, k, depth)
    return {"doc_id": gold.doc_id, "grade": gold.grade, **cells, "final_rank": gold.final_rank,
            "lost_stage": stage, "where": where}


def gold_paths(attribution: Sequence[GoldTrace], trace: TraceContext | None, k: int, depth: int) -> pd.DataFrame:
    """One row per gold document, best grade first: its rank at each stage the trace recorded (a column left
    empty where the trace recorded no ranking), its final rank, the stage that lost it and the sentence.

    Stage cells are text: a rank, ``—`` when the stage did not have the document, ``> N`` when the stage had it
    beyond the N candidates the trace recorded, ``dropped`` at the filter (``not in the first <depth>`` when it
    kept the document below the run's depth).
    """
    rows = [_row(t, trace, k, depth) for t in sorted(attribution, key=lambda t: (-t.grade, t.doc_id))]
    frame = pd.DataFrame(rows, columns=list(GOLD_PATH_COLUMNS))
    frame["final_rank"] = frame["final_rank"].astype("Int64")
    return frame
