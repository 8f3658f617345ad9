"""What the PostgreSQL trace store adds to the contract: the document filter's two plans, text
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
    assert [t.trace_id for t in pg_store.list_traces(TraceFilter(doc_id="common", limit=10))] == common[:10]
    assert [t.trace_id for t in pg_store.list_traces(TraceFilter(doc_id="common", limit=5, offset=10))] == common[10:15]
    fast = [t for i, t in enumerate(ids) if i % 2 and i % 3][::-1]
    assert [t.trace_id for t in pg_store.list_traces(TraceFilter(doc_id="common", mode="fast", limit=None))] == fast
    assert [t.trace_id for t in pg_store.list_traces(TraceFilter(doc_id="rare", limit=None))] == [
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
        with pytest.raises(StoreVersionError, match="run `searchtrace store migrate --store"):
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
