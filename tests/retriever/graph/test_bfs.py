"""The array BFS of MemoryGraph against the object traversal every other backend runs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchtrace.retriever.graph import _bfs
from searchtrace.retriever.graph._csr import build_arrays, dense_rank, intern_sorted
from searchtrace.retriever.graph._rows import build_rows
from searchtrace.retriever.graph._traverse import Edge, traverse
from searchtrace.retriever.graph.memory import MemoryGraph
from searchtrace.retriever.types import GraphHit, Triple

# "The E1" and "E1" share the key "e1": the first name seen is the display name.
NAMES = [f"E{i}" for i in range(10)] + ["The E1", "e2"]
TRIPLE = st.builds(Triple, st.sampled_from(NAMES), st.sampled_from(["r", "s"]), st.sampled_from(NAMES),
                   st.sampled_from(["d0", "d1", "d2", "d3"]))
KEYS = [f"e{i}" for i in range(10)] + ["unknown"]


def reference(triples: list[Triple], seeds: list[str], depth: int, limit: int) -> list[GraphHit]:
    """``traverse`` over an expand written straight from the loaded rows."""
    rows = build_rows(triples)
    names = {e.key: e.name for e in rows.entities}
    rels = [Edge(i, r.subject, r.object, Triple(names[r.subject], r.relation, names[r.object], r.doc_id))
            for i, r in enumerate(rows.relations)]
    return traverse(seeds, depth, limit, lambda keys: [e for e in rels if e.subject in keys or e.object in keys])


@settings(max_examples=300, deadline=None)
@given(st.lists(TRIPLE, max_size=40), st.lists(st.sampled_from(KEYS), min_size=1, max_size=4, unique=True),
       st.integers(1, 3), st.integers(0, 60))
def test_array_bfs_equals_the_object_traversal(triples, seeds, depth, limit):
    graph = MemoryGraph()
    graph.load(triples)
    assert graph.neighbourhood(seeds, depth, limit) == reference(triples, seeds, depth, limit)


def test_a_load_after_a_search_is_seen_by_the_next_search():
    graph = MemoryGraph()
    graph.load([Triple("A", "r", "B", "d1")])
    assert len(graph.neighbourhood(["a"], 2, 10)) == 1
    graph.load([Triple("B", "r", "C", "d2")])
    assert [h.triple.doc_id for h in graph.neighbourhood(["a"], 2, 10)] == ["d1", "d2"]
    graph.clear()
    assert graph.neighbourhood(["a"], 2, 10) == []


def test_dense_rank_shares_ranks_between_equal_keys():
    np.testing.assert_array_equal(dense_rank([("b", 1), ("a", 2), ("b", 1), ("a", 1)]), [2, 1, 2, 0])
    assert dense_rank([]).shape == (0,)


def test_intern_sorted():
    index, distinct = intern_sorted(["d2", "d10", "d2"])
    assert list(distinct) == ["d10", "d2"] and distinct.dtype == object
    np.testing.assert_array_equal(index, [1, 0, 1])


def test_touching_gathers_each_nodes_relations_in_order():
    # entity 0: relations 0, 1; entity 1: 0, 2; entity 2: 1, 2 (loop-free triangle); entity 3: none
    arrays = build_arrays([[0, 1], [0, 2], [1, 2], []], [(0, "r", 1, "d"), (0, "r", 2, "d"), (1, "r", 2, "d")],
                          ["a", "b", "c", "d"])
    rels, tags = _bfs.touching(arrays, np.array([2, 3, 0]), np.array([7, 8, 9]))
    np.testing.assert_array_equal(rels, [1, 2, 0, 1])
    np.testing.assert_array_equal(tags, [7, 7, 9, 9])
    rels, tags = _bfs.touching(arrays, np.array([], dtype=np.int64), np.array([], dtype=np.int64))
    assert rels.shape == tags.shape == (0,)


@pytest.mark.parametrize(("keys", "values", "want_keys", "want_values"), [
    ([5, 3, 5, 3, 9], [2, 4, 1, 0, 7], [3, 5, 9], [0, 1, 7]),
    ([], [], [], []),
])  # fmt: skip
def test_min_per_key(keys, values, want_keys, want_values):
    got_keys, got_values = _bfs.min_per_key(np.array(keys, dtype=np.int64), np.array(values, dtype=np.int64))
    np.testing.assert_array_equal(got_keys, want_keys)
    np.testing.assert_array_equal(got_values, want_values)
