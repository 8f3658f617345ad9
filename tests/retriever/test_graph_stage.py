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


def test_limit():
    hits = [GraphHit(Triple("A", "r", str(i), f"d{i}"), 1, "a") for i in range(5)]
    assert len(score_hits(reach_from_hits(["a"], hits), {"a": 5}, GraphConfig(), limit=3).docs) == 3
