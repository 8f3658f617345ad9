"""MemoryGraph beyond the contract: persistence, and the MuSiQue triples."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from searchtrace.errors import DataError, NotFoundError
from searchtrace.retriever.graph.memory import MemoryGraph
from searchtrace.retriever.graph.normalize import normalize_name
from searchtrace.retriever.types import Entity, GraphHit, Triple

SHARED_DATASETS = Path(__file__).resolve().parents[3].parent / "shared" / "datasets"
MUSIQUE_TRIPLES = SHARED_DATASETS / "musique" / "triples.jsonl"

TRIPLES = [
    Triple("Carl Rogers", "developed", "Person-centered therapy", "d1"),
    Triple("Person-centered therapy", "began in", "1940s", "d1"),
    Triple("Zoë's \"café\"", "in", "Zürich", "d2"),
]
ALIASES = {"Carl Rogers": ["Carl Ransom Rogers"]}


def _snapshot(graph: MemoryGraph) -> tuple:
    keys = ["carl rogers", "person centered therapy", "1940s", "zoe cafe", "zurich"]
    return (
        graph.stats(),
        graph.match_entities([*keys, "carl ransom rogers"]),
        graph.neighbourhood(keys, 3, 100),
        graph.degree(keys),
    )


@pytest.fixture
def graph() -> MemoryGraph:
    g = MemoryGraph()
    g.load(TRIPLES, ALIASES)
    return g


def test_save_and_open_round_trip(graph, tmp_path):
    path = graph.save(tmp_path / "graph.json")
    assert path == tmp_path / "graph.json" and not (tmp_path / "graph.json.tmp").exists()
    reopened = MemoryGraph.open(path)
    assert _snapshot(reopened) == _snapshot(graph)
    assert reopened.match_entities(["zoe cafe"]) == [Entity("zoe cafe", "Zoë's \"café\"")]


def test_saved_file_is_versioned_json(graph, tmp_path):
    data = json.loads(graph.save(tmp_path / "g.json").read_text(encoding="utf-8"))
    assert (data["format"], data["version"]) == ("searchtrace.memory-graph", 1)
    assert data["entities"][0] == ["carl rogers", "Carl Rogers", ["carl ransom rogers"]]
    assert data["relations"][0] == ["carl rogers", "developed", "person centered therapy", "d1"]


def test_constructor_does_no_io_and_connect_loads(graph, tmp_path):
    path = tmp_path / "graph.json"
    lazy = MemoryGraph(path)  # nothing there yet: fine until connect
    lazy.connect()
    assert lazy.stats() == {"entities": 0, "relations": 0}
    graph.save(path)
    assert lazy.stats() == {"entities": 0, "relations": 0}
    lazy.connect()
    assert _snapshot(lazy) == _snapshot(graph)


def test_build_then_save_to_the_connected_path(tmp_path):
    path = tmp_path / "graph.json"
    building = MemoryGraph(path)
    building.connect()
    building.load(TRIPLES, ALIASES)
    building.save(path)
    assert MemoryGraph.open(path).stats() == {"entities": 5, "relations": 3}


def test_open_missing_file(tmp_path):
    with pytest.raises(NotFoundError, match="no graph file at"):
        MemoryGraph.open(tmp_path / "missing.json")


@pytest.mark.parametrize(
    "content",
    ["not json", '{"format": "other", "version": 1}', '{"format": "searchtrace.memory-graph", "version": 2}',
     '{"format": "searchtrace.memory-graph", "version": 1, "entities": [["a"]], "relations": []}',
     '{"format": "searchtrace.memory-graph", "version": 1, "entities": [], "relations": [["a", "r", "b", "d"]]}'],
)  # fmt: skip
def test_open_rejects_other_files(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match=re.escape(str(path))):
        MemoryGraph.open(path)


def test_results_are_fresh_objects(graph):
    hits = graph.neighbourhood(["carl rogers"], 1, 10)
    hits.clear()
    assert graph.neighbourhood(["carl rogers"], 1, 10) == [GraphHit(TRIPLES[0], 1, "carl rogers")]


# --- the MuSiQue triples ---------------------------------------------------


@pytest.fixture(scope="module")
def musique() -> list[Triple]:
    if not MUSIQUE_TRIPLES.exists():
        pytest.skip(f"no shared datasets at {SHARED_DATASETS}")
    with MUSIQUE_TRIPLES.open(encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [Triple(s, p, o, row["_id"]) for row in rows for s, p, o in row["triples"]]


@pytest.mark.shared_data
def test_musique_loads_fast_and_keeps_every_distinct_triple(musique, tmp_path):
    graph = MemoryGraph()
    start = time.perf_counter()
    written = graph.load(musique)
    assert time.perf_counter() - start < 10.0
    distinct = {(normalize_name(t.subject), t.relation.strip(), normalize_name(t.object), t.doc_id) for t in musique}
    distinct = {d for d in distinct if d[0] and d[1] and d[2]}
    entities = {k for d in distinct for k in (d[0], d[2])}
    assert written == len(distinct) > 15_000
    assert graph.stats() == {"entities": len(entities), "relations": len(distinct)}
    assert graph.neighbourhood(["jan philip solovej"], 1, 10) == [
        GraphHit(Triple("Jan Philip Solovej", "is from", "University of Copenhagen", "musique_train-0"), 1, "jan philip solovej"),
        GraphHit(Triple("Journal of Mathematical Physics", "current editor is", "Jan Philip Solovej", "musique_train-0"), 1, "jan philip solovej"),
    ]  # fmt: skip
    reopened = MemoryGraph.open(graph.save(tmp_path / "musique.json"))
    assert reopened.stats() == graph.stats()
    hub = max(entities, key=lambda k: graph.degree([k])[k])
    start = time.perf_counter()
    assert reopened.neighbourhood([hub], 3, 200) == graph.neighbourhood([hub], 3, 200)
    assert time.perf_counter() - start < 2.0
