"""The GraphStore contract, run on every backend (in-process and Bolt)."""

from __future__ import annotations

import contextlib
import re
import socket
import time
from collections.abc import Iterator

import pytest

from searchtrace.errors import BackendUnavailable, ValidationError
from searchtrace.retriever.graph.base import GraphStore
from searchtrace.retriever.graph.memory import MemoryGraph
from searchtrace.retriever.graph.neo4j import Neo4jGraph
from searchtrace.retriever.graph.normalize import normalize_name
from searchtrace.retriever.types import Entity, GraphHit, Triple

INJECTION = "x'}) DETACH DELETE n //"
QUOTED_RELATION = 'said "}) MATCH (n) DETACH DELETE n //'
QUOTED_OBJECT = "Robert'); DROP TABLE Students;--"
QUOTED_DOC = "doc'\"}{$x}"

# e1..e12 below; e1 repeated (same doc) must be stored once.
E1 = Triple("Carl Rogers", "developed", "Person-centered therapy", "d1")
E2 = Triple("Carl Rogers", "developed", "Person-centered therapy", "d7")  # same fact, other doc
E3 = Triple("Carl Rogers", "born in", "Oak Park, Illinois", "d2")
E4 = Triple("Person-centered therapy", "began in", "1940s", "d1")
E5 = Triple("Oak Park, Illinois", "located in", "Cook County", "d3")
E6 = Triple("Cook County", "part of", "Illinois", "d3")
E7 = Triple("Illinois", "capital", "Springfield", "d4")
E8 = Triple("Café Müller", "choreographed by", "Pina Bausch", "d5")
E9 = Triple(INJECTION, "named", "Bobby Tables", "d6")
E10 = Triple("Bobby Tables", QUOTED_RELATION, QUOTED_OBJECT, QUOTED_DOC)
E11 = Triple("Ouroboros", "eats", "Ouroboros", "d8")  # self-loop
E12 = Triple("北京大学", "located in", "北京", "d9")
SKIPPED = [Triple("!!!", "is", "nothing", "d0"), Triple("x", "  ", "y", "d0")]  # empty key, blank relation
TRIPLES = [E1, E2, E3, E4, E5, E6, E7, E8, E9, E10, E11, E12, E1, *SKIPPED]
ALIASES = {
    "Carl Rogers": ["Carl Ransom Rogers", "Rogers", "carl rogers"],  # the last is its own key: dropped
    "Person-centered therapy": ["Rogerian therapy", "ROGERS"],  # "rogers" shared with Carl Rogers
    "Pina Bausch": ["Philippine Bausch"],
    "Bauhaus": ["Staatliches Bauhaus"],  # in no triple: still an entity, degree 0
}
ENTITY_KEYS = [
    "carl rogers", "person centered therapy", "oak park illinois", "1940s", "cook county", "illinois",
    "springfield", "cafe muller", "pina bausch", "x detach delete n", "bobby tables",
    "robert drop table students", "ouroboros", "北京大学", "北京", "bauhaus",
]  # fmt: skip
# Aliases come back as keys, in first-seen order.
CARL = Entity("carl rogers", "Carl Rogers", ("carl ransom rogers", "rogers"))
PCT = Entity("person centered therapy", "Person-centered therapy", ("rogerian therapy", "rogers"))
PINA = Entity("pina bausch", "Pina Bausch", ("philippine bausch",))
CAFE = Entity("cafe muller", "Café Müller")


def hit(t: Triple, hops: int, seed: str) -> GraphHit:
    return GraphHit(t, hops, seed)


@pytest.fixture(params=["memory", pytest.param("bolt", marks=pytest.mark.bolt)])
def store(request: pytest.FixtureRequest) -> Iterator[GraphStore]:
    """An empty, connected store of each backend."""
    if request.param == "memory":
        graph: GraphStore = MemoryGraph()
    else:
        uri, user, password, database = request.getfixturevalue("bolt_server")
        graph = Neo4jGraph(uri, user, password, database=database, timeout_s=10.0)
    graph.connect()
    graph.clear()
    yield graph
    graph.clear()
    graph.close()


@pytest.fixture
def loaded(store: GraphStore) -> GraphStore:
    assert store.load(TRIPLES, ALIASES) == 12
    return store


def test_is_a_graph_store(store):
    assert isinstance(store, GraphStore)


def test_stats_count_distinct_entities_and_relations(loaded):
    assert loaded.stats() == {"entities": len(ENTITY_KEYS), "relations": 12}


def test_empty_store(store):
    assert store.stats() == {"entities": 0, "relations": 0}
    assert store.match_entities(["carl rogers"]) == []
    assert store.neighbourhood(["carl rogers"], 3, 10) == []
    assert store.degree(["carl rogers"]) == {"carl rogers": 0}


def test_match_by_key_and_by_alias(loaded):
    assert loaded.match_entities(["carl rogers"]) == [CARL]
    assert loaded.match_entities(["carl ransom rogers"]) == [CARL]
    assert loaded.match_entities(["rogerian therapy"]) == [PCT]


def test_match_shared_alias_returns_every_owner_by_key(loaded):
    assert loaded.match_entities(["rogers"]) == [CARL, PCT]


def test_match_order_is_first_matching_name(loaded):
    names = ["nope", "philippine bausch", "cafe muller", "rogers", "pina bausch", "carl rogers"]
    assert loaded.match_entities(names) == [PINA, CAFE, CARL, PCT]


def test_match_normalized_spellings(loaded):
    spellings = ["The CAFÉ-Müller", "café  müller!", "Person–Centered Therapy", "carl ransom rogers"]
    names = [normalize_name(s) for s in spellings]
    assert names == ["cafe muller", "cafe muller", "person centered therapy", "carl ransom rogers"]
    assert loaded.match_entities(names) == [CAFE, PCT, CARL]


def test_match_is_exact_not_fuzzy(loaded):
    assert loaded.match_entities(["carl", "Carl Rogers", "carl rogers ", "cafe"]) == []
    assert loaded.match_entities([]) == []


def test_unicode_names_round_trip(loaded):
    assert loaded.match_entities(["北京大学", "北京"]) == [Entity("北京大学", "北京大学"), Entity("北京", "北京")]
    assert loaded.neighbourhood(["北京"], 1, 10) == [hit(E12, 1, "北京")]


def test_injection_looking_strings_are_stored_and_matched_literally(loaded):
    assert loaded.match_entities(["x detach delete n"]) == [Entity("x detach delete n", INJECTION)]
    assert loaded.match_entities(["' OR 1=1 //", "}) MATCH (n) DETACH DELETE n //", "$names"]) == []
    assert loaded.neighbourhood(["x detach delete n"], 2, 10) == [hit(E9, 1, "x detach delete n"), hit(E10, 2, "x detach delete n")]
    assert loaded.neighbourhood([INJECTION], 3, 10) == []
    assert loaded.degree(["robert drop table students", INJECTION]) == {"robert drop table students": 1, INJECTION: 0}
    assert loaded.stats() == {"entities": len(ENTITY_KEYS), "relations": 12}


def test_neighbourhood_depth_1(loaded):
    assert loaded.neighbourhood(["carl rogers"], 1, 10) == [
        hit(E3, 1, "carl rogers"),  # "born in" < "developed"
        hit(E1, 1, "carl rogers"),
        hit(E2, 1, "carl rogers"),  # same fact from another document: its own hit
    ]


def test_neighbourhood_depth_2(loaded):
    assert loaded.neighbourhood(["carl rogers"], 2, 10) == [
        hit(E3, 1, "carl rogers"),
        hit(E1, 1, "carl rogers"),
        hit(E2, 1, "carl rogers"),
        hit(E5, 2, "carl rogers"),  # "Oak Park, Illinois" < "Person-centered therapy"
        hit(E4, 2, "carl rogers"),
    ]


def test_neighbourhood_depth_3_and_doc_ids(loaded):
    hits = loaded.neighbourhood(["carl rogers"], 3, 10)
    assert hits == [
        hit(E3, 1, "carl rogers"),
        hit(E1, 1, "carl rogers"),
        hit(E2, 1, "carl rogers"),
        hit(E5, 2, "carl rogers"),
        hit(E4, 2, "carl rogers"),
        hit(E6, 3, "carl rogers"),
    ]
    assert [h.triple.doc_id for h in hits] == ["d2", "d1", "d7", "d3", "d1", "d3"]


def test_neighbourhood_limit_keeps_the_nearest(loaded):
    assert loaded.neighbourhood(["carl rogers"], 3, 4) == [
        hit(E3, 1, "carl rogers"),
        hit(E1, 1, "carl rogers"),
        hit(E2, 1, "carl rogers"),
        hit(E5, 2, "carl rogers"),
    ]
    assert loaded.neighbourhood(["carl rogers"], 3, 0) == []


def test_neighbourhood_several_seeds_nearest_seed_wins_then_seed_order(loaded):
    # E5 joins oak park (1 hop from carl rogers) and cook county (1 hop from illinois):
    # hops 2 either way, so it goes to the seed listed first.
    assert loaded.neighbourhood(["illinois", "carl rogers"], 2, 100) == [
        hit(E6, 1, "illinois"),
        hit(E7, 1, "illinois"),
        hit(E3, 1, "carl rogers"),
        hit(E1, 1, "carl rogers"),
        hit(E2, 1, "carl rogers"),
        hit(E5, 2, "illinois"),
        hit(E4, 2, "carl rogers"),
    ]
    assert loaded.neighbourhood(["carl rogers", "illinois"], 2, 100)[5] == hit(E5, 2, "carl rogers")


def test_neighbourhood_each_triple_once_at_its_nearest_hop(loaded):
    hits = loaded.neighbourhood(["carl rogers", "oak park illinois", "carl rogers"], 3, 100)
    assert len({h.triple for h in hits}) == len(hits) == 7
    assert hit(E3, 1, "carl rogers") in hits and hit(E5, 1, "oak park illinois") in hits
    assert hit(E7, 3, "oak park illinois") in hits


def test_neighbourhood_self_loop_and_unknown_seeds(loaded):
    assert loaded.neighbourhood(["ouroboros", "nope"], 3, 10) == [hit(E11, 1, "ouroboros")]
    assert loaded.neighbourhood(["nope"], 3, 10) == []
    assert loaded.neighbourhood([], 3, 10) == []
    assert loaded.neighbourhood(["bauhaus"], 1, 10) == []


@pytest.mark.parametrize("depth", [0, 4, -1, 1.5, True, "2"])
def test_neighbourhood_rejects_depth_outside_1_to_3(loaded, depth):
    with pytest.raises(ValidationError, match=r"depth must be one of \[1, 2, 3\]") as err:
        loaded.neighbourhood(["carl rogers"], depth, 10)
    assert err.value.field == "depth"


@pytest.mark.parametrize("limit", [-1, 2.0, None])
def test_neighbourhood_rejects_bad_limit(loaded, limit):
    with pytest.raises(ValidationError, match="limit must be an int >= 0"):
        loaded.neighbourhood(["carl rogers"], 1, limit)


def test_a_bare_string_is_not_a_key_list(loaded):
    for call in (loaded.match_entities, loaded.degree, lambda k: loaded.neighbourhood(k, 1, 5)):
        with pytest.raises(ValidationError, match="not a single string"):
            call("carl rogers")


def test_load_rejects_non_triples(store):
    with pytest.raises(ValidationError, match=r"triples\[1\] must be a Triple"):
        store.load([E1, ("a", "b", "c", "d")])


def test_degree(loaded):
    assert loaded.degree(["carl rogers", "person centered therapy", "ouroboros", "bauhaus", "nope", "北京"]) == {
        "carl rogers": 3,
        "person centered therapy": 3,
        "ouroboros": 1,  # a self-loop touches its entity once
        "bauhaus": 0,
        "nope": 0,
        "北京": 1,
    }


def test_document_entities(loaded):
    assert loaded.document_entities(["d1", "d3", QUOTED_DOC, "d8", "nope"]) == {
        "d1": ["1940s", "carl rogers", "person centered therapy"],
        "d3": ["cook county", "illinois", "oak park illinois"],
        QUOTED_DOC: ["bobby tables", "robert drop table students"],
        "d8": ["ouroboros"],  # a self-loop names its entity once
        "nope": [],
    }
    assert loaded.document_entities([]) == {}
    with pytest.raises(ValidationError):
        loaded.document_entities("d1")


def test_clear_removes_everything(loaded):
    loaded.clear()
    assert loaded.stats() == {"entities": 0, "relations": 0}
    assert loaded.match_entities(["carl rogers", "rogers"]) == []
    assert loaded.neighbourhood(["carl rogers"], 3, 10) == []
    assert loaded.load([E7]) == 1
    assert loaded.stats() == {"entities": 2, "relations": 1}


def test_reload_is_idempotent(loaded):
    before = (loaded.match_entities(ENTITY_KEYS), loaded.neighbourhood(ENTITY_KEYS, 3, 100), loaded.degree(ENTITY_KEYS))
    assert loaded.load(TRIPLES, ALIASES) == 12
    assert loaded.stats() == {"entities": len(ENTITY_KEYS), "relations": 12}
    after = (loaded.match_entities(ENTITY_KEYS), loaded.neighbourhood(ENTITY_KEYS, 3, 100), loaded.degree(ENTITY_KEYS))
    assert after == before


def test_later_loads_keep_the_first_name_and_add_aliases(loaded):
    assert loaded.load([Triple("CARL ROGERS", "wrote", "On Becoming a Person", "d10")], {"carl rogers": ["C. R. Rogers", "Rogers"]}) == 1
    assert loaded.match_entities(["c r rogers"]) == [
        Entity("carl rogers", "Carl Rogers", ("carl ransom rogers", "rogers", "c r rogers"))
    ]
    assert loaded.degree(["carl rogers", "on becoming a person"]) == {"carl rogers": 4, "on becoming a person": 1}
    assert loaded.neighbourhood(["on becoming a person"], 1, 5) == [
        hit(Triple("Carl Rogers", "wrote", "On Becoming a Person", "d10"), 1, "on becoming a person")
    ]


def test_large_load_is_batched(store):
    # More rows than one write batch (1,000): a chain of 1,201 entities and a hub.
    chain = [Triple(f"Node {i}", "next", f"Node {i + 1}", f"c{i // 7}") for i in range(1200)]
    hub = [Triple("Hub", "links", f"Node {i}", "hub") for i in range(0, 1200, 10)]
    assert store.load(chain + hub) == 1200 + 120
    assert store.stats() == {"entities": 1202, "relations": 1320}
    assert store.degree(["hub", "node 10", "node 11"]) == {"hub": 120, "node 10": 3, "node 11": 2}
    hits = store.neighbourhood(["node 1000"], 2, 5)
    assert [(h.triple.subject, h.triple.object, h.hops) for h in hits] == [
        ("Hub", "Node 1000", 1),
        ("Node 1000", "Node 1001", 1),
        ("Node 999", "Node 1000", 1),
        ("Hub", "Node 0", 2),
        ("Hub", "Node 10", 2),
    ]


def test_unreachable_server_raises_backend_unavailable_quickly():
    port = _closed_port()
    graph = Neo4jGraph(f"bolt://127.0.0.1:{port}", "neo4j", "secret", timeout_s=2.0)
    start = time.monotonic()
    with pytest.raises(BackendUnavailable, match=rf"graph server unavailable at bolt://127\.0\.0\.1:{port}") as err:
        graph.connect()
    assert time.monotonic() - start < 2.0
    assert err.value.code.value == "BACKEND_UNAVAILABLE"


def test_silent_server_times_out_within_the_connect_timeout():
    with _silent_listener() as port:
        graph = Neo4jGraph(f"bolt://127.0.0.1:{port}", "neo4j", "secret", timeout_s=0.5)
        start = time.monotonic()
        with pytest.raises(BackendUnavailable, match="graph server unavailable"):
            graph.connect()
        assert time.monotonic() - start < 3 * 0.5


@pytest.mark.bolt
def test_wrong_password_raises_backend_unavailable(bolt_server):
    uri, user, _, database = bolt_server
    graph = Neo4jGraph(uri, user, "not-the-password", database=database)
    with pytest.raises(BackendUnavailable, match=f"graph server unavailable at {re.escape(uri)}"):
        graph.connect()


def test_queries_before_connect_raise_backend_unavailable():
    graph = Neo4jGraph("bolt://127.0.0.1:1", "neo4j", "secret")  # constructing does no I/O
    with pytest.raises(BackendUnavailable, match=r"not connected: call connect\(\) first"):
        graph.stats()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _silent_listener() -> Iterator[int]:
    """A port whose TCP handshake succeeds (kernel backlog) but that never answers Bolt."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield s.getsockname()[1]
