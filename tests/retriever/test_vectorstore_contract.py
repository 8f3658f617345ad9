"""One contract, every vector store backend: Qdrant Edge and a Qdrant server (in-memory client)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from qdrant_client import QdrantClient

from searchtrace.errors import BackendUnavailable, NotFoundError, SearchtraceError, ValidationError
from searchtrace.retriever.vectorstore.base import Hit, PayloadFilter, PointRow, VectorStore
from searchtrace.retriever.vectorstore.bm25 import Bm25Encoder
from searchtrace.retriever.vectorstore.edge import EdgeStore
from searchtrace.retriever.vectorstore.server import ServerStore

DIM = 4


def _unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


# id, dense, text, payload
DOCS = [
    (0, _unit(1, 0, 0, 0), "apples and pears grow on trees",
     {"id": "d0", "collection": "fruit", "tags": ["food", "plant"], "timestamp": "2024-01-01T00:00:00Z"}),
    (1, _unit(1, 1, 0, 0), "pears are sweet and juicy",
     {"id": "d1", "collection": "fruit", "tags": ["food"], "timestamp": "2024-02-01T00:00:00Z"}),
    (2, _unit(1, 2, 0, 0), "the zebra grazes on grass",
     {"id": "d2", "collection": "animals", "tags": ["wild"], "timestamp": "2024-03-01T00:00:00Z"}),
    (3, _unit(0, 1, 1, 0), "trees shelter animals from rain",
     {"id": "d3", "collection": "animals", "tags": ["wild", "plant"], "timestamp": "2024-04-01T00:00:00Z"}),
    (4, _unit(0, 0, 1, 1), "rain falls on trees and grass",
     {"id": "d4", "collection": "weather", "tags": [], "timestamp": ""}),
]
ENCODER = Bm25Encoder(avg_len=4.0)


def _rows() -> list[PointRow]:
    sparse = ENCODER.encode_documents([d[2] for d in DOCS])
    return [PointRow(i, v, s, p) for (i, v, _, p), s in zip(DOCS, sparse)]


@pytest.fixture(params=["edge", "server"])
def make_store(request: pytest.FixtureRequest, tmp_path) -> Callable[[], VectorStore]:
    """A factory of stores over the same backing (same shard path / same client)."""
    if request.param == "edge":
        return lambda: EdgeStore(tmp_path / "shard")
    client = QdrantClient(":memory:")
    return lambda: ServerStore(client=client, collection="contract")


@pytest.fixture
def store(make_store) -> Iterator[VectorStore]:
    s = make_store()
    s.create(DIM)
    s.upsert(_rows())
    s.flush()
    yield s
    s.close()


def _ids(hits: list[Hit]) -> list[int]:
    return [h.id for h in hits]


def test_implements_protocol(store):
    assert isinstance(store, VectorStore)


def test_count(store):
    assert store.count() == len(DOCS)


def test_dense_exact_order_and_cosine_scores(store):
    query = _unit(1, 0, 0, 0)
    [hits] = store.search_dense(query[None, :], limit=5)
    # cos to (1,0,0,0): d0 1, d1 1/sqrt2, d2 1/sqrt5, d3 = d4 = 0
    assert _ids(hits)[:3] == [0, 1, 2]
    assert [h.score for h in hits[:3]] == pytest.approx([1.0, 1 / np.sqrt(2), 1 / np.sqrt(5)], abs=1e-6)
    assert set(_ids(hits)[3:]) == {3, 4}


def test_dense_limit(store):
    [hits] = store.search_dense(_unit(0, 0, 1, 1)[None, :], limit=2)
    assert _ids(hits) == [4, 3]


def test_bm25_ranks_rare_term_first(store):
    [hits] = store.search_sparse([ENCODER.encode_query("zebra trees")], limit=5)
    # "zebra" occurs in one doc, "trees" in three: the IDF makes d2 win.
    assert _ids(hits)[0] == 2
    assert set(_ids(hits)) == {0, 2, 3, 4}
    assert all(h.score > 0 for h in hits)


def test_bm25_unknown_term_finds_nothing(store):
    assert store.search_sparse([ENCODER.encode_query("xylophone")], limit=5) == [[]]


def test_batch_equals_single(store):
    dense = np.stack([_unit(1, 0, 0, 0), _unit(0, 1, 1, 0), _unit(0, 0, 0, 1)])
    texts = ["zebra", "pears trees", "rain grass"]
    sparse = [ENCODER.encode_query(t) for t in texts]
    d_batch = store.search_dense(dense, limit=3)
    s_batch = store.search_sparse(sparse, limit=3)
    assert d_batch == [store.search_dense(v[None, :], limit=3)[0] for v in dense]
    assert s_batch == [store.search_sparse([s], limit=3)[0] for s in sparse]
    assert store.search_hybrid(dense, sparse, limit=3) == (d_batch, s_batch)


def test_hybrid_rejects_mismatched_batches(store):
    with pytest.raises(ValidationError):
        store.search_hybrid(np.stack([_unit(1, 0, 0, 0)]), [], limit=3)


def test_bad_requests_raise_domain_errors(store):
    with pytest.raises(ValidationError):
        store.search_dense(_unit(1, 0, 0, 0)[None, :], limit=0)
    with pytest.raises(ValidationError):
        store.search_sparse([ENCODER.encode_query("zebra")], limit=0)
    with pytest.raises(ValidationError):
        store.search_dense(_unit(1, 0, 0, 0), limit=3)  # 1-d: not a batch
    with pytest.raises(SearchtraceError):
        store.search_dense(np.ones((1, DIM + 1), dtype=np.float32), limit=3)


def test_empty_batches(store):
    empty = np.empty((0, DIM), dtype=np.float32)
    assert store.search_dense(empty, limit=3) == []
    assert store.search_sparse([], limit=3) == []
    assert store.search_hybrid(empty, [], limit=3) == ([], [])
    assert store.search_sparse([ENCODER.encode_query("the of")], limit=3) == [[]]  # stopwords only


def test_filter_given_lists_still_works(store):
    flt = PayloadFilter(tags_any=["wild"], doc_ids=["d2", "d3", "d4"])  # type: ignore[arg-type]
    [hits] = store.search_dense(_unit(1, 1, 1, 1)[None, :], limit=10, flt=flt)
    assert set(_ids(hits)) == {2, 3}


def _expected(pred: Callable[[dict], bool]) -> set[int]:
    return {i for i, _, _, p in DOCS if pred(p)}


FILTER_CASES = [
    (PayloadFilter(), lambda p: True),
    (PayloadFilter(collection="fruit"), lambda p: p["collection"] == "fruit"),
    (PayloadFilter(collection="nope"), lambda p: False),
    (PayloadFilter(tags_any=("plant", "wild")), lambda p: bool({"plant", "wild"} & set(p["tags"]))),
    (PayloadFilter(tags_all=("wild", "plant")), lambda p: {"plant", "wild"} <= set(p["tags"])),
    (PayloadFilter(tags_any=()), lambda p: False),
    (PayloadFilter(tags_all=()), lambda p: True),
    (PayloadFilter(doc_ids=("d1", "d4", "missing")), lambda p: p["id"] in {"d1", "d4"}),
    # half-open [created_after, created_before); an empty timestamp never matches a range
    (PayloadFilter(created_after="2024-02-01T00:00:00Z"), lambda p: p["timestamp"] >= "2024-02-01"),
    (PayloadFilter(created_before="2024-03-01"), lambda p: "" < p["timestamp"] < "2024-03-01"),
    (PayloadFilter(created_after="2024-02-01", created_before="2024-04-01T00:00:00Z"),
     lambda p: "2024-02-01" <= p["timestamp"] < "2024-04-01"),
    # an offset is honoured (01:00+02:00 is 23:00Z the day before); a naive time is UTC
    (PayloadFilter(created_after="2024-02-01T01:00:00+02:00", created_before="2024-02-01T00:00:01"),
     lambda p: p["id"] == "d1"),
    (PayloadFilter(collection="animals", tags_any=("plant",)), lambda p: p["id"] == "d3"),
]


@pytest.mark.parametrize(("flt", "pred"), FILTER_CASES, ids=[repr(c[0]) for c in FILTER_CASES])
def test_filters(store, flt, pred):
    expected = _expected(pred)
    [dense] = store.search_dense(_unit(1, 1, 1, 1)[None, :], limit=10, flt=flt)
    assert set(_ids(dense)) == expected
    [sparse] = store.search_sparse([ENCODER.encode_query("trees grass pears zebra")], limit=10, flt=flt)
    assert set(_ids(sparse)) <= expected
    d, s = store.search_hybrid(_unit(1, 1, 1, 1)[None, :],
                               [ENCODER.encode_query("trees grass pears zebra")], limit=10, flt=flt)
    assert (d, s) == ([dense], [sparse])


def test_sparse_filter_matches_exactly(store):
    [hits] = store.search_sparse([ENCODER.encode_query("trees")], limit=10, flt=PayloadFilter(collection="animals"))
    assert _ids(hits) == [3]


@pytest.mark.parametrize("field", ["created_after", "created_before"])
@pytest.mark.parametrize("bad", ["last tuesday", "2024", 20240101])
def test_invalid_datetime_is_a_validation_error(store, field, bad):
    other = "created_before" if field == "created_after" else "created_after"
    flt = PayloadFilter(**{field: bad, other: "2024-02-01"})
    with pytest.raises(ValidationError) as err:
        store.search_dense(_unit(1, 0, 0, 0)[None, :], limit=3, flt=flt)
    assert err.value.field == field


def test_retrieve_keeps_order_and_skips_unknown(store):
    got = store.retrieve([3, 99, 0])
    assert [g[0] for g in got] == [3, 0]
    assert got[0][1] == DOCS[3][3] and got[1][1] == DOCS[0][3]
    assert got[0][2] is None
    with_vec = store.retrieve([2, 1], with_vectors=True)
    assert [g[0] for g in with_vec] == [2, 1]
    for (_, _, vec), expected in zip(with_vec, (DOCS[2][1], DOCS[1][1])):
        assert vec.dtype == np.float32
        np.testing.assert_allclose(vec, expected, atol=1e-6)
    assert store.retrieve([]) == []


def test_upsert_overwrites_same_id(store):
    row = _rows()[0]
    store.upsert([PointRow(0, _unit(0, 0, 0, 1), row.sparse, {**row.payload, "collection": "moved"})])
    store.flush()
    assert store.count() == len(DOCS)
    assert store.retrieve([0])[0][1]["collection"] == "moved"


def test_reopen_persists(store, make_store):
    before = store.search_dense(_unit(1, 0, 0, 0)[None, :], limit=5)
    store.close()
    again = make_store()
    again.open()
    try:
        assert again.count() == len(DOCS)
        assert again.search_dense(_unit(1, 0, 0, 0)[None, :], limit=5) == before
        assert _ids(again.search_sparse([ENCODER.encode_query("zebra")], limit=5)[0]) == [2]
        assert _ids(again.search_dense(_unit(1, 0, 0, 0)[None, :], limit=5,
                                       flt=PayloadFilter(collection="weather"))[0]) == [4]
    finally:
        again.close()


def test_create_drops_existing(store):
    store.create(DIM)
    assert store.count() == 0
    assert store.search_dense(_unit(1, 0, 0, 0)[None, :], limit=5) == [[]]


def test_open_missing_is_not_found(make_store):
    with pytest.raises(NotFoundError):
        make_store().open()


def test_use_before_open_is_backend_unavailable(make_store):
    with pytest.raises(BackendUnavailable):
        make_store().count()


def test_server_unreachable_names_url():
    store = ServerStore(url="http://127.0.0.1:9", collection="x")  # port 9 (discard): refused
    with pytest.raises(BackendUnavailable, match=r"127\.0\.0\.1:9"):
        store.open()


def test_edge_create_refuses_to_delete_a_foreign_directory(tmp_path):
    (tmp_path / "notes.txt").write_text("keep me")
    with pytest.raises(ValidationError):
        EdgeStore(tmp_path).create(DIM)
    assert (tmp_path / "notes.txt").exists()


def test_constructors_do_no_io(tmp_path):
    EdgeStore(tmp_path / "never")
    ServerStore(url="http://127.0.0.1:9")
    assert not (tmp_path / "never").exists()


@pytest.fixture(scope="module")
def random_edge(tmp_path_factory):
    rng = np.random.default_rng(7)
    vecs = rng.normal(size=(60, 8)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    store = EdgeStore(tmp_path_factory.mktemp("rand") / "shard")
    store.create(8)
    empty = ENCODER.encode_documents([""])[0]
    store.upsert([PointRow(i, v, empty, {"id": f"r{i}"}) for i, v in enumerate(vecs)])
    store.flush()
    yield store, vecs
    store.close()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False, width=32), min_size=8, max_size=8)
       .filter(lambda xs: np.linalg.norm(xs) > 1e-3))
def test_dense_matches_brute_force(random_edge, query):
    store, vecs = random_edge
    q = np.asarray(query, dtype=np.float32)
    sims = vecs @ (q / np.linalg.norm(q))
    [hits] = store.search_dense(q[None, :], limit=5)
    np.testing.assert_allclose([h.score for h in hits], np.sort(sims)[::-1][:5], atol=1e-5)


def test_server_store_passes_cluster_layout_to_create_collection():
    from qdrant_client import QdrantClient

    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.retriever.vectorstore.server import ServerStore

    calls = {}

    class Recording(QdrantClient):
        def create_collection(self, name, **kwargs):
            calls.update(kwargs)
            return super().create_collection(name, **kwargs)

    store = ServerStore(client=Recording(":memory:"), collection="c", shard_number=3, replication_factor=2)
    store.create(4)
    assert calls["shard_number"] == 3 and calls["replication_factor"] == 2
    config = resolve_config(environ={"QDRANT_SHARD_NUMBER": "6", "QDRANT_REPLICATION_FACTOR": "2"})
    assert (config.qdrant_shards, config.qdrant_replication) == (6, 2)
    from searchtrace.errors import ValidationError

    with pytest.raises(ValidationError, match="QDRANT_SHARD_NUMBER"):
        resolve_config(environ={"QDRANT_SHARD_NUMBER": "zero"})


# --- the parts multivector: the nearest passages by their own vector, scored by their best part ---

def _parts_rows(rng: np.random.Generator, n: int) -> list[PointRow]:
    """Random points with 1-4 parts each; point 0 has no parts (it was created without any)."""
    rows = []
    for i in range(n):
        dense = rng.normal(size=DIM).astype(np.float32)
        parts = None if i == 0 else rng.normal(size=(int(rng.integers(1, 5)), DIM)).astype(np.float32)
        rows.append(PointRow(i, dense / np.linalg.norm(dense), ENCODER.encode_documents(["x"])[0],
                             {"id": f"p{i}", "collection": "even" if i % 2 == 0 else "odd"}, parts))
    return rows


def _cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (b @ a) / (np.linalg.norm(b, axis=-1) * np.linalg.norm(a))


@pytest.fixture
def parts_store(make_store):
    s = make_store()
    s.create(DIM, parts=True)
    rows = _parts_rows(np.random.default_rng(7), 40)
    s.upsert(rows)
    s.flush()
    yield s, rows
    s.close()


def _parts_expected(rows: list[PointRow], q: np.ndarray, limit: int, keep=lambda r: True) -> dict[int, float]:
    """Of the ``limit`` best by passage cosine, those with parts: id -> best-part cosine, best first."""
    rows = [r for r in rows if keep(r)]
    nearest = sorted(rows, key=lambda r: -float(_cos(q, r.dense)))[:limit]
    best = {r.id: float(_cos(q, r.parts).max()) for r in nearest if r.parts is not None}
    return dict(sorted(best.items(), key=lambda kv: -kv[1]))


def test_parts_scores_equal_numpy(parts_store):
    store, rows = parts_store
    queries = np.random.default_rng(3).normal(size=(3, DIM)).astype(np.float32)
    queries[0] = rows[0].dense  # point 0, the nearest, has no parts: left out
    for q, got in zip(queries, store.search_best_parts(queries, limit=6)):
        expected = _parts_expected(rows, q, 6)
        assert _ids(got) == list(expected)
        assert [h.score for h in got] == pytest.approx(list(expected.values()), abs=1e-5)
    assert 0 not in _ids(store.search_best_parts(queries[:1], limit=6)[0])


def test_parts_search_honours_the_filter(parts_store):
    store, rows = parts_store
    q = np.random.default_rng(4).normal(size=DIM).astype(np.float32)
    [got] = store.search_best_parts(q[None, :], limit=4, flt=PayloadFilter(collection="odd"))
    assert _ids(got) == list(_parts_expected(rows, q, 4, keep=lambda r: r.payload["collection"] == "odd"))


def test_parts_search_rejects_bad_requests(parts_store):
    store, _ = parts_store
    with pytest.raises(ValidationError):
        store.search_best_parts(np.ones((1, DIM), dtype=np.float32), limit=0)
    with pytest.raises(ValidationError):
        store.search_best_parts(np.ones(DIM, dtype=np.float32), limit=3)
