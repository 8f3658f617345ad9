"""The stage that lost a gold document, in words, from the eval's attribution and the ranks a trace recorded.

Small inline searches: each names the stage that moved the document below the cut,
so the sentence is checked word for word, and the ranks shown are the trace's.
"""

from __future__ import annotations

import pandas as pd

from searchtrace.dashboard.data.gold_path import gold_paths, lost_words
from searchtrace.dashboard.data.query_context import TraceContext
from searchtrace.evals import GoldTrace, LostAt

K, DEPTH = 10, 100


def ids(*docs: str, filler: int = 40) -> tuple[str, ...]:
    """A ranked list: ``docs`` at the ranks they are placed at (None leaves a rank to filler ids)."""
    return tuple(docs) + tuple(f"x{i}" for i in range(filler))


def at(rank: int, doc: str, n: int = 40) -> tuple[str, ...]:
    """``n`` ids with ``doc`` at ``rank``."""
    out = [f"y{i}" for i in range(n)]
    out.insert(rank - 1, doc)
    return tuple(out)


def trace(**ranked: tuple[str, ...]) -> TraceContext:
    return TraceContext("t" * 32, "q", (), (), None, (), {s: len(v) for s, v in ranked.items()}, {},
                        ranked=ranked, shown=at(2, "zz", 8))


def gold(lost: LostAt, stages=("dense",), fused: int | None = None, final: int | None = None,
         filtered: bool = False) -> GoldTrace:
    return GoldTrace("q1", "d", 2, tuple(stages), fused, filtered, final, lost)


def test_a_reranker_that_pushes_it_down_is_named_with_both_ranks():
    t = trace(dense=at(2, "d"), fuse=at(4, "d"), rerank=at(31, "d"))
    assert lost_words(gold(LostAt.RANKED_OUT, fused=31, final=31), t, K, DEPTH) == (
        "rerank", "lost at rerank: rank 4 → 31, below the cut of 10")


def test_fusion_that_buries_a_stages_top_hit_names_that_stage():
    t = trace(dense=at(30, "d"), keyword=at(3, "d"), fuse=at(17, "d"), rerank=at(17, "d"))
    assert lost_words(gold(LostAt.RANKED_OUT, ("dense", "keyword"), 17, 17), t, K, DEPTH) == (
        "fuse", "lost at fuse: rank 3 at keyword → 17, below the cut of 10")


def test_a_document_no_stage_ranked_within_the_cut_is_lost_at_retrieval():
    t = trace(dense=at(14, "d"), keyword=at(25, "d"), fuse=at(16, "d"), rerank=at(16, "d"))
    assert lost_words(gold(LostAt.RANKED_OUT, ("dense", "keyword"), 16, None), t, K, DEPTH) == (
        "retrieval", "lost at retrieval: its best rank, 14 at dense, is below the cut of 10; final rank not in "
                     "the first 100")


def test_the_filter_and_a_missing_document_read_from_the_attribution():
    t = trace(dense=at(5, "d"), fuse=at(5, "d"), rerank=at(5, "d"))
    assert lost_words(gold(LostAt.FILTERED, fused=5, filtered=True), t, K, DEPTH) == (
        "filter", "lost at filter: dropped from rank 5 by the request's filters")
    assert lost_words(gold(LostAt.NOT_RETRIEVED, ()), trace(dense=ids(), keyword=ids()), K, DEPTH) == (
        "retrieval", "not retrieved: no retrieval stage (dense, keyword) returned it")
    assert lost_words(gold(LostAt.FOUND, fused=2, final=2), t, K, DEPTH) == ("", "found: rank 2, within the cut of 10")


def test_without_a_trace_the_attribution_alone_speaks():
    words = lost_words(gold(LostAt.RANKED_OUT, fused=12, final=12), None, K, DEPTH)
    assert words == ("fuse", "lost at fuse: rank 12, below the cut of 10; final rank 12")


def test_the_table_shows_each_stage_rank_as_recorded():
    t = trace(dense=at(2, "d"), keyword=ids(), fuse=at(4, "d"), rerank=at(31, "d"))
    t = TraceContext(**{**t.__dict__, "candidate_counts": {**t.candidate_counts, "dense": 500}})
    beyond = trace(dense=at(2, "e"), keyword=ids(), fuse=at(4, "e"), rerank=at(31, "e"))
    beyond = TraceContext(**{**beyond.__dict__, "candidate_counts": {**beyond.candidate_counts, "dense": 500}})
    row = gold_paths([gold(LostAt.RANKED_OUT, ("dense",), 31, 31)], t, K, DEPTH).iloc[0]
    assert (row["dense"], row["keyword"], row["graph"], row["fuse"], row["rerank"], row["filter"]) == (
        "2", "—", None, "4", "31", "31")
    assert row["shape"] == "—" and row["final_rank"] == 31 and row["lost_stage"] == "rerank"
    # dense had it (the attribution says so) beyond the 41 ids the trace recorded of its 500
    row = gold_paths([gold(LostAt.RANKED_OUT, ("dense",), 31, 31)], beyond, K, DEPTH).iloc[0]
    assert row["dense"] == "> 41" and row["keyword"] == "—"
    # a document no stage returned has no rank after the fusion either, not "below the depth"
    missing = trace(dense=ids(), keyword=ids(), fuse=ids(), rerank=ids())
    row = gold_paths([gold(LostAt.NOT_RETRIEVED, ())], missing, K, DEPTH).iloc[0]
    assert (row["fuse"], row["rerank"], row["filter"], row["final_rank"] is pd.NA) == ("—", "—", "—", True)
