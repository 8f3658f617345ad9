"""The whole pipeline on the non-default backends: a Qdrant server through qdrant-client
(against QdrantClient(":memory:")), and Neo4j over Bolt (ArcadeDB, or NEO4J_URI)."""

import pytest

pytestmark = pytest.mark.slow


def chunk_ids(response):
    return [r.id for r in response.chunks]


def test_qdrant_server_store_gives_the_same_results_as_edge(tmp_path, model, sample_dataset, traced, warm_cache):
    from qdrant_client import QdrantClient

    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.retriever.index import build_index, open_index
    from searchtrace.retriever.search.pipeline import Retriever
    from searchtrace.retriever.vectorstore.server import ServerStore

    client = QdrantClient(":memory:")
    config = resolve_config(home=warm_cache(tmp_path), environ={})  # the vectors cached: only the store is new
    factory = lambda collection: ServerStore(client=client, collection=collection)  # noqa: E731
    path = build_index(sample_dataset, config, model, progress=False, make_store=factory)
    server_index = open_index(path, config, make_store=factory)
    try:
        assert server_index.store.count() == len(sample_dataset.docs)
        on_server = Retriever(server_index, model, config)
        on_edge, _ = traced()
        queries = [q.text for q in sample_dataset.queries if q.category in ("keyword-exact", "paraphrase")][:30]
        same_top = 0
        for text in queries:
            a = on_server.search({"query": text, "mode": "fast", "top_k": 5})
            b = on_edge.search({"query": text, "mode": "fast", "top_k": 5})
            assert len(chunk_ids(a)) == 5
            same_top += chunk_ids(a)[0] == chunk_ids(b)[0]
            assert a.best_score == pytest.approx(b.best_score, abs=0.02)
        assert same_top >= 0.9 * len(queries)
        filtered = on_server.search({"query": "harbour", "collection": "gazetteer", "mode": "fast"})
        assert filtered.results and all(r.metadata.collection == "gazetteer" for r in filtered.results)
    finally:
        server_index.close()
