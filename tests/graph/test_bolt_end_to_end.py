"""The whole pipeline with its graph in Neo4j over Bolt (ArcadeDB, or NEO4J_URI)."""

import pytest

pytestmark = pytest.mark.slow


def chunk_ids(response):
    return [r["id"] for r in response["results"] if r["component_type"] == "chunk"]


@pytest.mark.bolt
def test_graph_mode_over_bolt_matches_the_embedded_graph(bolt_server, tmp_path, model, sample_dataset, traced):
    """Index the sample with its graph in a Bolt server; graph-mode searches equal the embedded graph's."""
    from searchtrace.retriever.index import build_index, open_index
    from searchtrace.retriever.pipeline import Retriever
    from searchtrace.retriever.settings import resolve_config

    uri, user, password, database = bolt_server
    config = resolve_config(home=tmp_path, neo4j_uri=uri, neo4j_user=user, neo4j_password=password,
                                     neo4j_database=database, environ={})
    index = open_index(build_index(sample_dataset, config, model, progress=False), config)
    try:
        assert index.manifest.graph_backend == "neo4j"
        assert index.graph.stats()["relations"] > 0
        over_bolt = Retriever(index, model, config)
        embedded, _ = traced()
        for q in [q for q in sample_dataset.queries if q.category == "multi-hop"][:8]:
            a = over_bolt.search({"query": q.text, "mode": "graph", "top_k": 5})
            b = embedded.search({"query": q.text, "mode": "graph", "top_k": 5})
            assert a["degraded"] == [] and chunk_ids(a) == chunk_ids(b)
            assert {(t["subject"], t["relation"], t["object"]) for t in a["kg"]} == \
                {(t["subject"], t["relation"], t["object"]) for t in b["kg"]}
    finally:
        index.graph.clear()
        index.close()
