"""What the PostgreSQL trace store adds to the contract: the document filter over the whole store, text
jsonb cannot hold, the schema check, and the drop counts processes leave."""

from __future__ import annotations

import pytest
from trace_fixtures import MS, T0, FakeSearch, record

from searchtrace.database import Database, StoreUrl, StoreVersionError
from searchtrace.traces import TraceFilter

S = 1000 * MS


@pytest.fixture
def pg_store(pg_db):
    from searchtrace.traces.store.postgres import PostgresTraceStore

    return PostgresTraceStore(pg_db)


def test_the_document_filter_covers_the_whole_store_newest_first(pg_store):
    searches = [FakeSearch(start_ns=T0 + i * S, results=(("needle" if i in (3, 650) else f"hay{i}", "high", 0.9),),
                           candidates=3, mode="fast" if i == 3 else "graph") for i in range(700)]
    spans, ids = record(*searches)
    for i in range(0, len(spans), 1000):
        pg_store.write(spans[i:i + 1000])
    found = pg_store.doc_traces("needle", TraceFilter(limit=200))
    assert [t.trace_id for t in found] == [ids[650], ids[3]]  # far beyond the newest 500, newest first
    assert [t.trace_id for t in pg_store.doc_traces("needle", TraceFilter(mode="fast"))] == [ids[3]]
    assert [t.trace_id for t in pg_store.doc_traces("needle", TraceFilter(limit=1, offset=1))] == [ids[3]]
    assert pg_store.doc_traces("absent") == []
    # a candidate only (not a result) is found too: every id list of every span counts
    assert [t.trace_id for t in pg_store.doc_traces("dense-0", TraceFilter(limit=3))] == ids[:-4:-1]


@pytest.mark.parametrize("sorted_up_to", [1, 100_000])
def test_both_plans_of_the_document_filter_give_the_same_page(pg_store, monkeypatch, sorted_up_to):
    """A document in more traces than DOC_SORTED is found by walking the newest; in fewer, by its index, sorted."""
    from searchtrace.traces.store import postgres

    monkeypatch.setattr(postgres, "DOC_SORTED", sorted_up_to)
    spans, ids = record(*(FakeSearch(start_ns=T0 + i * S, candidates=3, mode="fast" if i % 3 else "graph",
                                     results=(("common", "high", 0.9),) if i % 2 else (("rare", "low", 0.1),))
                          for i in range(60)))
    pg_store.write(spans)
    common = [t for i, t in enumerate(ids) if i % 2][::-1]
    assert [t.trace_id for t in pg_store.doc_traces("common", TraceFilter(limit=10))] == common[:10]
    assert [t.trace_id for t in pg_store.doc_traces("common", TraceFilter(limit=5, offset=10))] == common[10:15]
    fast = [t for i, t in enumerate(ids) if i % 2 and i % 3][::-1]
    assert [t.trace_id for t in pg_store.doc_traces("common", TraceFilter(mode="fast", limit=None))] == fast
    assert [t.trace_id for t in pg_store.doc_traces("rare", TraceFilter(limit=None))] == [
        t for i, t in enumerate(ids) if not i % 2][::-1]


def test_a_traces_documents_from_several_batches_are_one_list(pg_store):
    spans, (trace_id,) = record(FakeSearch(start_ns=T0 + 5 * S, candidates=4))
    children = [s for s in spans if s.parent is not None]
    pg_store.write(children[:5])
    pg_store.write(children[5:])
    pg_store.write([s for s in spans if s.parent is None])
    pg_store.write(children[:2])  # a re-export adds nothing twice
    with pg_store.db.connection() as conn:
        (docs,) = conn.execute("SELECT doc_ids FROM st_traces WHERE trace_id = %s", (trace_id,)).fetchone()
    named = {d for s in spans for k, ids in s.attributes.items() if k.endswith("ids") and k != "searchtrace.relation.ids"
             for d in ids}
    assert docs == sorted(named) and "d1" in docs and "graph-0" in docs


def test_text_jsonb_cannot_hold_is_stored_readably(pg_store):
    spans, (trace_id,) = record(FakeSearch(query="nul\x00inside, a backslash-u0000 kept: \\u0000"))
    assert pg_store.write(spans) == 11
    detail = pg_store.load_trace(trace_id)
    assert detail.summary.query == "nul\ufffdinside, a backslash-u0000 kept: \\u0000"
    assert detail.spans[0].attributes["input.value"] == "nul\x00inside, a backslash-u0000 kept: \\u0000"  # as given
    assert pg_store.list_traces(TraceFilter(query_text="nul\ufffd"))[0].trace_id == trace_id


def test_an_unmigrated_store_is_refused_before_anything_is_written(pg_url):
    from searchtrace.traces.store.postgres import PostgresTraceStore

    db = Database(StoreUrl(pg_url))
    try:
        store = PostgresTraceStore(db)
        spans, _ = record(FakeSearch())
        with pytest.raises(StoreVersionError, match="run `searchtrace store migrate`"):
            store.write(spans)
        with db.connection() as conn:
            assert conn.execute("SELECT to_regclass('st_spans')").fetchone()[0] is None
    finally:
        db.close()


def test_drop_counts_are_one_running_total_per_process(pg_store):
    assert pg_store.dropped() == 0
    pg_store.note_dropped("host-a", 10, T0, 5, 100)
    pg_store.note_dropped("host-a", 10, T0, 12, 100)  # the same process's total, updated
    pg_store.note_dropped("host-b", 10, T0, 3, 100)
    assert pg_store.dropped() == 15


def test_the_attribute_filter_covers_the_whole_store(pg_store):
    """An attribute's value (any case; an array's items joined) found in any span of any trace, newest first,
    however far back: read a batch of traces at a time."""
    searches = [FakeSearch(start_ns=T0 + i * S, candidates=3, mode="fast" if i % 2 else "graph",
                           query="the Needle in the haystack" if i in (1, 4, 640) else f"hay {i}")
                for i in range(650)]
    spans, ids = record(*searches)
    pg_store.write(spans)
    found = pg_store.attribute_traces("input.value", "NEEDLE", TraceFilter(limit=200), batch=100)
    assert [t.trace_id for t in found] == [ids[640], ids[4], ids[1]]
    assert [t.trace_id for t in pg_store.attribute_traces("input.value", "needle", TraceFilter(mode="fast"))] == [
        ids[1]]
    assert [t.trace_id for t in pg_store.attribute_traces("input.value", "needle", TraceFilter(limit=1, offset=1),
                                                          batch=7)] == [ids[4]]
    dense = "searchtrace.candidate.ids"  # an array: its items joined by ", "
    assert len(pg_store.attribute_traces(dense, "d1, d2", TraceFilter(limit=None))) == 650
    assert pg_store.attribute_traces("no.such.key", "x") == []
