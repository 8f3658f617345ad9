import math

import pytest

from searchtrace.names import Stage
from searchtrace.retriever.config.model import GraphConfig
from searchtrace.retriever.graph.reach import reach_from_hits
from searchtrace.retriever.stages.graph import relation_id, score_hits
from searchtrace.retriever.types import GraphHit, Triple


def test_doc_scores_follow_hop_decay_and_seed_degree():
    hits = [
        GraphHit(Triple("A", "r", "B", "d1"), 1, "a"),
        GraphHit(Triple("B", "r", "C", "d2"), 2, "a"),
        GraphHit(Triple("A", "s", "D", "d1"), 1, "a"),
    ]
    cfg = GraphConfig(hop_decay=0.5, max_relation_hits=2)
    out = score_hits(reach_from_hits(["a"], hits), {"a": 3}, cfg, limit=10)
    got = dict(zip(out.docs.ids, out.docs.scores))
    assert out.docs.stage is Stage.GRAPH
    assert got["d1"] == pytest.approx(2 * 1 / math.log2(1 + 3))
    assert got["d2"] == pytest.approx(0.5 / math.log2(1 + 3))
    assert list(out.docs.ids) == ["d1", "d2"]
    assert len(out.relations) == 2 and all(r.triple.doc_id == "d1" for r in out.relations)
    assert out.relations[0].id == relation_id(out.relations[0].triple)


def test_one_fact_in_several_documents_is_one_relation_naming_each():
    """Issue 39: "Sorrel Point located on Quillon", said by two documents, was two relation hits."""
    hits = [
        GraphHit(Triple("Sorrel Point", "located on", "Quillon", "d2"), 1, "a"),
        GraphHit(Triple("Sorrel Point", "located on", "Quillon", "d1"), 1, "a"),
        GraphHit(Triple("Sorrel Point", "near", "Tull", "d3"), 2, "a"),
        GraphHit(Triple("Sorrel Point", "located on", "Quillon", "d2"), 2, "b"),
    ]
    out = score_hits(reach_from_hits(["a", "b"], hits), {"a": 1, "b": 1}, GraphConfig(max_relation_hits=3), limit=10)
    facts = [(r.triple.subject, r.triple.relation, r.triple.object) for r in out.relations]
    assert facts == [("Sorrel Point", "located on", "Quillon"), ("Sorrel Point", "near", "Tull")]
    located = out.relations[0]
    assert located.doc_ids == ("d1", "d2") and located.triple.doc_id == "d1"  # equal weights: by triple
    assert located.score == pytest.approx(1 / math.log2(2))
    assert located.id == relation_id(Triple("Sorrel Point", "located on", "Quillon", "d2"))  # the fact's id
    assert located.within({"d2", "d3"}) == type(located)(located.id, hits[0].triple, located.score, ("d2",))
    assert located.within({"d3"}) is None


def test_limit():
    hits = [GraphHit(Triple("A", "r", str(i), f"d{i}"), 1, "a") for i in range(5)]
    assert len(score_hits(reach_from_hits(["a"], hits), {"a": 5}, GraphConfig(), limit=3).docs) == 3
