"""The whole pipeline with its graph in Neo4j over Bolt (ArcadeDB, or NEO4J_URI)."""

import pytest

pytestmark = pytest.mark.slow


def chunk_ids(response):
    return [r.id for r in response.chunks]


@pytest.mark.bolt
def test_graph_mode_over_bolt_matches_the_embedded_graph(bolt_server, tmp_path, model, sample_dataset, traced):
    """Index the sample with its graph in a Bolt server; graph-mode searches equal the embedded graph's."""
    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.retriever.index import build_index, open_index
    from searchtrace.retriever.search.pipeline import Retriever

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
            assert a.degraded == () and chunk_ids(a) == chunk_ids(b)
            assert {(t.subject, t.relation, t.object) for t in a.kg} == {(t.subject, t.relation, t.object) for t in b.kg}
    finally:
        index.graph.clear()
        index.close()


@pytest.mark.bolt
def test_two_indexes_share_one_database_without_touching_each_other(bolt_server, tmp_path, model, sample_dataset):
    """Indexing a second dataset into the same database keeps the first one's graph; clearing one keeps the other."""
    import json
    import shutil

    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.retriever.data.beir import load_dataset
    from searchtrace.retriever.index import DamagedIndex, build_index, ensure_index, open_index
    from searchtrace.retriever.search.pipeline import Retriever

    uri, user, password, database = bolt_server
    config = resolve_config(home=tmp_path / "home", neo4j_uri=uri, neo4j_user=user, neo4j_password=password,
                            neo4j_database=database, environ={})
    other = tmp_path / "other"  # a second dataset: the sample's first 40 passages and their triples
    other.mkdir()
    corpus = sample_dataset.root.joinpath("corpus.jsonl").read_text().splitlines()[:40]
    (other / "corpus.jsonl").write_text("\n".join(corpus) + "\n")
    ids = {json.loads(line)["_id"] for line in corpus}
    triples = [line for line in sample_dataset.root.joinpath("triples.jsonl").read_text().splitlines()
               if json.loads(line)["_id"] in ids]
    (other / "triples.jsonl").write_text("\n".join(triples) + "\n")
    shutil.copy(sample_dataset.root / "queries.jsonl", other / "queries.jsonl")

    first = open_index(build_index(sample_dataset, config, model, progress=False), config)
    query = {"query": "What bird appears on the sigil of the fellowship Orsolya Venn entered?", "mode": "graph",
             "top_k": 5}
    before = Retriever(first, model, config).search(query)
    first_stats = first.graph.stats()
    second = open_index(build_index(load_dataset(other), config, model, progress=False), config)
    try:
        assert 0 < second.graph.stats()["relations"] < first_stats["relations"]
        assert first.graph.stats() == first_stats  # the second build cleared only its own graph
        after = Retriever(first, model, config).search(query)
        assert after.kg and after.kg == before.kg and after.degraded == ()
        assert chunk_ids(after) == chunk_ids(before)
        second.graph.clear()
        assert first.graph.stats() == first_stats and second.graph.stats() == {"entities": 0, "relations": 0}
        with pytest.raises(DamagedIndex, match="holds none of this index's triples"):
            open_index(second.path, config)  # a graph cleared behind the index's back is not silently empty
        ensure_index(other, config, model, progress=False).close()  # ... and is rebuilt
        assert second.graph.stats()["relations"] > 0
    finally:
        first.graph.clear()
        second.graph.clear()
        first.close()
        second.close()
