"""The trace store's contract for another retriever's traces, on SQLite and on PostgreSQL: each search span a
row (both conventions), a trace a search with its first search's query and the ``otlp`` source, the service
and project filters, stages decided when read whatever order the spans came in, the per-service document-id
key re-deriving stored searches; then what only the SQLite file has (the upgrade from schema 4)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from foreign_fixtures import as_fourth_schema, genai, record_foreign, reranker, retriever, span_id, trace_id
from trace_fixtures import FakeSearch, record

from searchtrace.traces.spans.foreign import Document
from searchtrace.traces.spans.vocabulary import TraceKind
from searchtrace.traces.store import sqlite_sql as sql
from searchtrace.traces.store.records import SearchFilter, TraceFilter
from searchtrace.traces.store.sqlite import TraceStore

DOCS = [{"id": "kb-1", "score": 0.8, "content": "The harbour town lies on the river."},
        {"metadata": json.dumps({"source": "kb-2.md"}), "content": "Tide tables."},
        {"id": "kb-3"}]


def rag_chain(tracer, query="harbour town", docs=DOCS):
    """A LangChain-like trace: a CHAIN root, an EMBEDDING and a RETRIEVER under it, then a RERANKER."""
    with tracer.start_as_current_span("RetrievalQA", attributes={"openinference.span.kind": "CHAIN",
                                                                 "input.value": query}):
        with tracer.start_as_current_span("embed", attributes={"openinference.span.kind": "EMBEDDING"}):
            pass
        with tracer.start_as_current_span("VectorStoreRetriever", attributes=retriever(query, docs)):
            pass
        with tracer.start_as_current_span("rerank", attributes=reranker(query, docs[:2], docs[1:2], 1)):
            pass


def test_a_foreign_trace_is_a_search_of_its_service_and_project_with_its_documents(store):
    spans = record_foreign(rag_chain)
    assert store.write(spans) == 4
    (summary,) = store.list_traces()
    assert (summary.kind, summary.source, summary.query, summary.service, summary.project) == (
        TraceKind.SEARCH, "otlp", "harbour town", "rag-app", "support")
    assert summary.foreign and summary.n_spans == 4 and summary.complete
    (search,) = store.searches()
    retriever_span = next(s for s in spans if s.name == "VectorStoreRetriever")
    assert (search.trace_id, search.span_id, search.query, search.convention) == (
        trace_id(retriever_span), span_id(retriever_span), "harbour town", "openinference")
    assert search.documents == (Document("kb-1", 0.8, DOCS[0]["content"]), Document(None, None, "Tide tables."),
                                Document("kb-3", None, None))
    assert search.unidentified == 1 and (search.service, search.project) == ("rag-app", "support")
    assert search.duration_ms == pytest.approx((retriever_span.end_time - retriever_span.start_time) / 1e6)
    assert [d.content for d in store.searches(SearchFilter(contents=False))[0].documents] == [None] * 3


def test_service_and_project_filter_traces_and_searches(store):
    store.write(record_foreign(rag_chain, service="rag-app", project="support"))
    store.write(record_foreign(lambda t: rag_chain(t, "tide"), service="other-app", project=None))
    ours, _ = record(FakeSearch())
    store.write(ours)
    assert [t.query for t in store.list_traces(TraceFilter(service="other-app"))] == ["tide"]
    assert [t.query for t in store.list_traces(TraceFilter(project="support"))] == ["harbour town"]
    assert store.count(TraceFilter(sources=("otlp",))) == 2
    assert store.list_traces(TraceFilter(service="nobody")) == []
    default = ours[0].resource.attributes["service.name"]  # the SDK's: unknown_service:<executable>
    assert str(default).startswith("unknown_service")
    (own,) = store.list_traces(TraceFilter(service=str(default)))
    assert own.source != "otlp" and own.project is None
    assert [s.query for s in store.searches(SearchFilter(service="other-app"))] == ["tide"]
    assert [s.query for s in store.searches(SearchFilter(project="support"))] == ["harbour town"]
    assert len(store.searches()) == 2  # our own search is not another retriever's


def test_our_own_search_stays_ours(store):
    spans, (tid,) = record(FakeSearch(candidates=3))
    store.write(spans)
    (summary,) = store.list_traces()
    assert summary.source != "otlp" and not summary.foreign and summary.kind is TraceKind.SEARCH
    assert store.searches() == []


def test_a_genai_retrieval_span_is_stored_as_a_search(store):
    docs = [{"id": "doc_123", "score": 0.95}, {"id": "doc_456", "score": 0.87}]
    spans = record_foreign(lambda t: t.start_span("retrieval kb-main", attributes=genai("tides", docs, top_k=2)).end(),
                           service="genai-app", project=None)
    store.write(spans)
    (search,) = store.searches()
    assert (search.query, search.doc_ids, search.scores, search.top_k, search.data_source, search.convention) == (
        "tides", ("doc_123", "doc_456"), (0.95, 0.87), 2, "kb-main", "genai")
    assert search.project is None and store.list_traces()[0].query == "tides"


def nested(tracer):
    """An outer retriever (an ensemble) whose work is two retrievers, one of them under a CHAIN."""
    with tracer.start_as_current_span("ensemble", attributes=retriever("outer", DOCS)):
        with tracer.start_as_current_span("bm25", attributes=retriever("inner-1", DOCS[:1])):
            pass
        with tracer.start_as_current_span("glue", attributes={"openinference.span.kind": "CHAIN"}):
            with tracer.start_as_current_span("dense", attributes=retriever("inner-2", DOCS[2:])):
                pass


def test_a_retriever_nested_in_another_is_a_stage(store):
    store.write(record_foreign(nested))
    assert [s.query for s in store.searches()] == ["outer"]


def test_a_nested_retriever_written_before_its_parent_is_a_stage_once_the_parent_comes(store):
    spans = record_foreign(nested)
    by_name = {s.name: s for s in spans}
    store.write([by_name["dense"]])  # the child retriever first, alone: nothing says yet it is a stage
    assert [s.query for s in store.searches()] == ["inner-2"]
    assert store.list_traces()[0].query == "inner-2"
    store.write([by_name["glue"], by_name["bm25"]])
    store.write([by_name["ensemble"]])
    assert [s.query for s in store.searches()] == ["outer"]
    (summary,) = store.list_traces()
    assert summary.query == "outer" and summary.complete and summary.n_spans == 4


def test_sibling_searches_of_one_trace_are_each_listed(store):
    def two(tracer):
        with tracer.start_as_current_span("agent", attributes={"openinference.span.kind": "CHAIN"}):
            with tracer.start_as_current_span("first", attributes=retriever("tide tables", DOCS[:1])):
                pass
            with tracer.start_as_current_span("second", attributes=retriever("ferry times", DOCS[2:])):
                pass

    store.write(record_foreign(two))
    found = store.searches()
    assert [(s.query, s.doc_ids) for s in found] == [("tide tables", ("kb-1",)), ("ferry times", ("kb-3",))]
    assert found[0].trace_id == found[1].trace_id
    assert store.list_traces()[0].query == "tide tables"  # the trace's query: its first search's


def test_setting_a_services_id_key_rederives_its_stored_searches(store):
    store.write(record_foreign(rag_chain, service="rag-app"))
    store.write(record_foreign(rag_chain, service="other-app"))
    assert store.doc_id_keys() == {}
    assert store.set_doc_id_key("rag-app", "source") == 1
    assert store.doc_id_keys() == {"rag-app": "source"}
    by_service = {s.service: s for s in store.searches()}
    assert by_service["rag-app"].doc_ids == ("kb-1", "kb-2.md", "kb-3") and by_service["rag-app"].unidentified == 0
    assert by_service["other-app"].doc_ids == ("kb-1", None, "kb-3")  # another service's key is its own
    store.write(record_foreign(rag_chain, service="rag-app"))  # written after: read with the key
    assert [s.doc_ids[1] for s in store.searches(SearchFilter(service="rag-app"))] == ["kb-2.md", "kb-2.md"]
    assert store.set_doc_id_key("rag-app", None) == 2
    assert store.doc_id_keys() == {}
    assert [s.unidentified for s in store.searches(SearchFilter(service="rag-app"))] == [1, 1]


def test_the_any_service_key_reads_every_service_without_its_own(store):
    store.write(record_foreign(rag_chain, service="rag-app"))
    store.write(record_foreign(rag_chain, service="other-app"))
    assert store.set_doc_id_key("other-app", "page") == 1  # other-app's own key names nothing there
    assert store.set_doc_id_key("*", "source") == 1  # only rag-app's search is read again
    by_service = {s.service: s.doc_ids for s in store.searches()}
    assert by_service == {"rag-app": ("kb-1", "kb-2.md", "kb-3"), "other-app": ("kb-1", None, "kb-3")}
    store.write(record_foreign(rag_chain, service="new-app"))  # written after: read with the default
    assert store.searches(SearchFilter(service="new-app"))[0].doc_ids == ("kb-1", "kb-2.md", "kb-3")
    assert store.set_doc_id_key("other-app", None) == 1  # forgotten: it takes the default
    assert store.searches(SearchFilter(service="other-app"))[0].doc_ids == ("kb-1", "kb-2.md", "kb-3")
    assert store.set_doc_id_key("*", None) == 3
    assert [s.unidentified for s in store.searches()] == [1, 1, 1]


def test_searches_are_read_by_time_and_pruned_with_their_traces(store):
    first = record_foreign(lambda t: rag_chain(t, "one"))
    second = record_foreign(lambda t: rag_chain(t, "two"))
    store.write(first + second)
    middle = min(s.start_time for s in second)
    assert [s.query for s in store.searches(SearchFilter(since=middle))] == ["two"]
    assert [s.query for s in store.searches(SearchFilter(until=middle))] == ["one"]
    assert [s.query for s in store.searches(SearchFilter(trace_ids=(trace_id(first[0]).upper(),)))] == ["one"]
    assert store.prune(keep_last=1) == 1
    assert [s.query for s in store.searches()] == ["two"]


def test_a_fourth_schema_store_is_read_then_brought_to_the_fifth(tmp_path):
    path = tmp_path / "traces.sqlite"
    first = TraceStore(path)
    ours, _ = record(FakeSearch())
    first.write(ours)
    first.close()
    as_fourth_schema(path)
    reader = TraceStore(path)  # no writer yet: no searches, no service, and the filters find nothing
    assert reader.searches() == [] and reader.doc_id_keys() == {}
    assert reader.list_traces()[0].service is None and reader.list_traces(TraceFilter(service="x")) == []
    reader.close()
    writer = TraceStore(path)
    writer.write(record_foreign(rag_chain))
    assert [s.query for s in writer.searches()] == ["harbour town"]
    assert [t.service for t in writer.list_traces(TraceFilter(service="rag-app"))] == ["rag-app"]
    assert len(writer.list_traces()) == 2
    writer.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone() == (sql.SCHEMA_VERSION,) == (6,)  # and on to the sixth (trace_docs)
    conn.close()


def test_a_salvaged_store_keeps_its_searches_and_id_keys(tmp_path):
    from searchtrace.traces.store.repair import salvage

    old = TraceStore(tmp_path / "old.sqlite")
    old.write(record_foreign(nested))
    old.write(record_foreign(rag_chain))
    old.set_doc_id_key("rag-app", "source")
    old.close()
    new = TraceStore(tmp_path / "new.sqlite")
    report = salvage(tmp_path / "old.sqlite", new)
    assert (report.traces, report.spans, report.unreadable_rows) == (2, 8, 0)
    assert new.doc_id_keys() == {"rag-app": "source"}
    assert [(s.query, s.doc_ids) for s in new.searches()] == [
        ("outer", ("kb-1", "kb-2.md", "kb-3")), ("harbour town", ("kb-1", "kb-2.md", "kb-3"))]
    new.close()


def test_a_fourth_schema_file_is_salvaged_without_searches(tmp_path):
    from searchtrace.traces.store.repair import salvage

    old = TraceStore(tmp_path / "old.sqlite")
    old.write(record_foreign(rag_chain))
    old.close()
    as_fourth_schema(tmp_path / "old.sqlite")
    new = TraceStore(tmp_path / "new.sqlite")
    report = salvage(tmp_path / "old.sqlite", new)
    assert (report.traces, report.unreadable_rows) == (1, 0) and new.searches() == []
    new.close()
