"""Personalized PageRank of the graph stage: formulas, an independent implementation, seeds, scores."""

import numpy as np
import pytest

from searchtrace.names import Stage
from searchtrace.retriever.config.model import GraphConfig
from searchtrace.retriever.graph.memory import MemoryGraph
from searchtrace.retriever.graph.reach import reach_from_hits
from searchtrace.retriever.stages import ppr
from searchtrace.retriever.stages.graph import graph, score_ppr
from searchtrace.retriever.types import GraphHit, GraphMethod, Triple


def hit(s, o, doc, hops=1, seed="a"):
    return GraphHit(Triple(s, "r", o, doc), hops, seed)


def subgraph(seeds, hits):
    return ppr.subgraph(reach_from_hits(seeds, hits))


def test_two_nodes_closed_form():
    # x_a = (1 - d) + d x_b and x_b = d x_a  =>  x_a = 1 / (1 + d), x_b = d / (1 + d)
    hits = [hit("A", "B", "d1")]
    sub = subgraph(["a"], hits)
    for d in (0.3, 0.5, 0.85):
        mass = ppr.pagerank(sub, np.array([1.0]), d)
        np.testing.assert_allclose(mass, [1 / (1 + d), d / (1 + d)], atol=1e-6)


def test_matches_networkx_personalized_pagerank():
    nx = pytest.importorskip("networkx")
    edges = [("A", "B"), ("B", "C"), ("C", "A"), ("C", "D"), ("D", "E"), ("E", "F"), ("B", "E")]
    hits = [hit(s, o, f"d{i}") for i, (s, o) in enumerate(edges)]
    sub = subgraph(["a", "d"], hits)
    restart = np.array([0.75, 0.25])
    mass = ppr.pagerank(sub, restart, 0.5)
    graph = nx.Graph([(s.lower(), o.lower()) for s, o in edges])
    want = nx.pagerank(graph, alpha=0.5, personalization={"a": 0.75, "d": 0.25}, tol=1e-12, max_iter=1000)
    keys = list(dict.fromkeys(["a", "d", *(n.lower() for edge in edges for n in edge)]))  # seeds, then first seen
    np.testing.assert_allclose(mass, [want[keys[i]] for i in sub.ids], atol=1e-5)
    assert mass.sum() == pytest.approx(1.0)


def test_isolated_seed_keeps_its_mass():
    sub = subgraph(["a", "z"], [hit("A", "B", "d1")])
    mass = ppr.pagerank(sub, np.array([0.5, 0.5]), 0.5)
    assert mass.sum() == pytest.approx(1.0)
    # z's walk has nowhere to go and restarts at the seeds: z = (1 - d) / 2 + d z / 2
    assert mass[1] == pytest.approx((1 - 0.5) / (2 - 0.5), abs=1e-6)


def test_seed_weights_favour_named_and_specific_entities():
    query = "Which country did the author of Brand live in?"
    w = ppr.seed_weights(query, ["brand", "author", "country"], {"brand": 2, "author": 4, "country": 10}, 0.1)
    raw = np.array([1.0 / 2, 0.1 / 4, 0.1 / 10])
    np.testing.assert_allclose(w, raw / raw.sum())
    uniform = ppr.seed_weights("who wrote it", ["it"], {"it": 1}, 0.0)
    np.testing.assert_allclose(uniform, [1.0])


def test_document_and_triple_scores_sum_entity_mass():
    hits = [hit("A", "B", "d1"), hit("B", "C", "d2"), hit("A", "C", "d1")]
    found = reach_from_hits(["a"], hits)
    sub = ppr.subgraph(found)
    mass = np.array([0.5, 0.3, 0.2])  # a, b, c
    docs, scores = ppr.document_scores(sub, found.doc.tolist(), mass)
    assert list(found.doc_ids[docs]) == ["d1", "d2"]
    np.testing.assert_allclose(scores, [0.5 + 0.3 + 0.2, 0.3 + 0.2])
    np.testing.assert_allclose(ppr.triple_scores(sub, mass), [0.8, 0.5, 0.7])


def test_score_ppr_ranks_documents_near_the_seed_first():
    hits = [hit("Brand", "Henrik Ibsen", "play"), hit("Henrik Ibsen", "Norway", "ibsen", 2),
            hit("Norway", "Oslo", "norway", 3)]
    cfg = GraphConfig(method=GraphMethod.PPR, max_relation_hits=2)
    out = score_ppr(reach_from_hits(["brand"], hits), ["brand"], [], {"brand": 1}, "the author of Brand", cfg,
                    limit=10)
    assert out.docs.stage is Stage.GRAPH
    assert list(out.docs.ids) == ["play", "ibsen", "norway"]
    assert np.all(np.diff(out.docs.scores) < 0)
    assert [r.triple.doc_id for r in out.relations] == ["play", "ibsen"]


def test_restart_weights_give_first_pass_entities_their_share():
    degree = {"brand": 2, "author": 4, "henrik ibsen": 1, "1865": 3}
    query = "Which country did the author of Brand live in?"
    w = ppr.restart_weights(query, ["brand", "author"], ["henrik ibsen", "1865"], degree, 0.1, 0.5)
    assert w.sum() == pytest.approx(1.0)
    # the query's entities together 1, the passage's 0.5, each part split as its own rule says
    np.testing.assert_allclose(w[:2] / w[:2].sum(), ppr.seed_weights(query, ["brand", "author"], degree, 0.1))
    np.testing.assert_allclose(w[2:], 0.5 / 1.5 * np.array([1 / 1, 1 / 3]) / (1 / 1 + 1 / 3))
    only_docs = ppr.restart_weights("who wrote it", [], ["henrik ibsen", "1865"], degree, 0.1, 0.5)
    np.testing.assert_allclose(only_docs, [0.75, 0.25])
    np.testing.assert_allclose(ppr.restart_weights(query, ["brand"], [], degree, 0.1, 0.5), [1.0])


BRIDGE = [
    Triple("Hello Love", "performed by", "Hank Snow", "song"),
    Triple("Hank Snow", "born in", "Nova Scotia", "singer"),
    Triple("Nova Scotia", "part of", "Canada", "province"),
    Triple("Publix", "founded in", "Florida", "grocer"),
]


@pytest.fixture
def bridge_graph():
    g = MemoryGraph()
    g.load(BRIDGE)
    return g


def ranked(out):
    return list(out.docs.ids)


def test_seed_docs_reach_the_passage_past_the_bridge(bridge_graph):
    cfg = GraphConfig(method=GraphMethod.PPR, seed_docs=1, seed_docs_weight=0.5)
    query = "How many Publix stores are in the province where the performer of a song was born?"
    alone = graph(bridge_graph, ["publix"], 2, 10, cfg, query)
    assert ranked(alone) == ["grocer"]
    seeded = graph(bridge_graph, ["publix"], 2, 10, cfg, query, seed_docs=["song"])
    assert ranked(seeded)[0] == "grocer"  # the query's own entity keeps the larger share
    assert set(ranked(seeded)) == {"grocer", "song", "singer", "province"}
    got = dict(zip(seeded.docs.ids, seeded.docs.scores))
    assert got["singer"] > got["province"]  # one hop from the bridge entity, then two
    # a question whose entities the graph lacks still walks from the first-pass passage
    assert ranked(graph(bridge_graph, [], 2, 10, cfg, query, seed_docs=["song"]))[:2] == ["song", "singer"]


def test_seed_docs_off_by_weight_zero_and_ignored_by_expand(bridge_graph):
    query = "the performer of Hello Love"
    plain = graph(bridge_graph, ["hello love"], 2, 10, GraphConfig(), query)
    zero = graph(bridge_graph, ["hello love"], 2, 10, GraphConfig(seed_docs_weight=0.0), query, seed_docs=["grocer"])
    assert ranked(zero) == ranked(plain) and list(zero.docs.scores) == list(plain.docs.scores)
    expand = GraphConfig(method=GraphMethod.EXPAND)
    assert ranked(graph(bridge_graph, ["hello love"], 2, 10, expand, query, seed_docs=["grocer"])) == ranked(
        graph(bridge_graph, ["hello love"], 2, 10, expand, query))
    assert ranked(graph(bridge_graph, [], 2, 10, expand, query, seed_docs=["grocer"])) == []
