from searchtrace.retriever.graph.memory import MemoryGraph
from searchtrace.retriever.stages.rewrite import normalize_query, rewrite
from searchtrace.retriever.types import Triple


def graph():
    g = MemoryGraph()
    g.load(
        [Triple("Port Vell", "located on", "Isle of Corra", "d1"), Triple("Vell", "named after", "Ana Vell", "d2"),
         Triple("Lantern Guild", "founded in", "Port Vell", "d3")],
        aliases={"Port Vell": ["the Old Harbour"]},
    )
    return g


def test_normalize_query():
    assert normalize_query("  harbour\t\x00fees \n") == "harbour fees"


def test_detects_entities_by_name_and_alias_keeping_longest():
    rw = rewrite("When was the Old Harbour on the Isle of Corra built?", graph())
    assert [e.name for e in rw.entities] == ["Isle of Corra", "Port Vell"]
    assert rw.rewrite_terms == ("Port Vell",)
    assert rw.keyword_query == "When was the Old Harbour on the Isle of Corra built? Port Vell"


def test_longer_match_hides_contained_one():
    rw = rewrite("Port Vell fishing fleet", graph())
    assert [e.name for e in rw.entities] == ["Port Vell"]
    assert "Vell" not in [e.name for e in rw.entities]
    assert rw.rewrite_terms == ("old harbour",)  # aliases are stored normalized


def test_without_graph_only_normalizes():
    rw = rewrite("  Port  Vell ", None)
    assert rw.query == "Port Vell" and rw.entities == () and rw.rewrite_terms == ()
