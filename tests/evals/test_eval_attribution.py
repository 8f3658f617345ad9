from searchtrace.evals.scoring.attribution import LostAt, attribute, summarize


def test_each_gold_document_is_traced_through_the_stages():
    traces = attribute(
        "q1", {"a": 2, "b": 1, "c": 1, "d": 1, "z": 0},
        stage_ids={"dense": ["a", "x", "c"], "keyword": ["b", "a"], "graph": []},
        fused_ids=["a", "b", "x", "c"], dropped_ids=["c"], ranking=["a", "x", "b"], k=2,
    )
    by = {t.doc_id: t for t in traces}
    assert set(by) == {"a", "b", "c", "d"}  # grade 0 is not gold
    assert by["a"].stages == ("dense", "keyword") and by["a"].final_rank == 1 and by["a"].lost_at is LostAt.FOUND
    assert by["b"].fused_rank == 2 and by["b"].final_rank == 3 and by["b"].lost_at is LostAt.RANKED_OUT
    assert by["c"].filtered and by["c"].lost_at is LostAt.FILTERED
    assert by["d"].stages == () and by["d"].lost_at is LostAt.NOT_RETRIEVED


def test_summary_candidate_recall_and_lost_at():
    traces = attribute("q", {"a": 1, "b": 1}, {"dense": ["a"], "keyword": ["a", "b"]}, ["a", "b"], [], ["a"], 1)
    s = summarize(traces, ["dense", "keyword"])
    assert s["candidate_recall"] == {"dense": 0.5, "keyword": 1.0, "any": 1.0}
    assert s["lost_at"] == {"found": 1, "ranked_out": 1, "filtered": 0, "not_retrieved": 0}


def test_an_id_listed_twice_is_ranked_where_it_was_last_listed():
    [trace] = attribute("q", {"a": 1}, {"dense": ["a"]}, ["a", "b", "a"], [], ["b", "a", "c", "a"], k=3)
    assert (trace.fused_rank, trace.final_rank, trace.lost_at) == (3, 4, LostAt.RANKED_OUT)
