"""The trace store's contract for what the dashboard's Traces page needs over every stored trace, on SQLite and
on PostgreSQL: the ``failed`` filter (a failure of any kind), the order sorted by the store over every match,
the document filter along an index; then SQLite's schema 6 (``trace_docs``) filled for an older store."""

from __future__ import annotations

import sqlite3

import pytest
from foreign_fixtures import as_fifth_schema
from trace_fixtures import MS, T0, FakeSearch, record

from searchtrace.traces import vocabulary as v
from searchtrace.traces.store.records import TraceOrder
from searchtrace.traces.store.sqlite import TraceFilter, TraceStore

S = 1000 * MS


def _served(status, code=None, search=True, name="POST /v1/search", at=1):
    """A server span answering ``status`` (None: none recorded), with ``code`` as its error, over a search span."""
    from opentelemetry.trace import SpanKind, Status, StatusCode

    def build(tracer):
        attributes = {v.SOURCE: "http", **({v.HTTP_RESPONSE_STATUS_CODE: status} if status else {})}
        with tracer.start_as_current_span(name, kind=SpanKind.SERVER, start_time=T0 + at * S,
                                          attributes=attributes) as server:
            if search:
                with tracer.start_as_current_span(v.SEARCH_SPAN, attributes={v.SOURCE: "http", v.MODE: "fast"}):
                    pass
            if code:
                server.set_attribute(v.ERROR_CODE, code)
                server.set_status(Status(StatusCode.ERROR, code.lower()))
            return format(server.get_span_context().trace_id, "032x")

    return build


def _spans(*build):
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    ids = [b(provider.get_tracer("test")) for b in build]
    return list(exporter.get_finished_spans()), ids


def test_failed_is_a_failure_of_any_kind(store):
    """A root in error, an error code, or an HTTP status of 400 or more: a 404 whose span ended ok is failed too,
    which ``errors`` (the root's status alone) misses."""
    kinds = {"ok": _served(200), "invalid": _served(400, "VALIDATION_ERROR", at=2),
             "refused": _served(429, "OVERLOADED", search=False, at=3),
             "missing": _served(404, search=False, name="GET /v1/docs/x", at=4),
             "docs": _served(200, search=False, name="GET /v1/docs", at=5)}
    spans, ids = _spans(*kinds.values())
    store.write(spans)
    name_of = dict(zip(ids, kinds))

    def listed(**fields):
        return [name_of[t.trace_id] for t in store.list_traces(TraceFilter(**fields))]

    assert listed(failed=True) == ["missing", "refused", "invalid"]
    assert listed(failed=False) == ["docs", "ok"]
    assert listed(errors=True) == ["refused", "invalid"]  # the 404 answered without an error status
    assert store.count(TraceFilter(failed=True)) == 3 and store.count(TraceFilter(failed=False)) == 2
    search = TraceFilter(failed=True, sources=("http",), kind=None)
    assert store.count(search) == 3
    id_of = {n: t for t, n in name_of.items()}
    assert store.error_messages([*ids, "0" * 32]) == {id_of["invalid"]: "validation_error",
                                                     id_of["refused"]: "overloaded"}  # the root's, said once


@pytest.fixture
def many(store):
    """700 searches, each slower or faster than its neighbours in no order of time; the document "needle" in
    three, far apart."""
    ms = [((i * 37) % 700) / 10 + 1 for i in range(700)]
    searches = [FakeSearch(start_ns=T0 + i * S, stage_ms=ms[i], candidates=3,
                           results=(("needle" if i in (2, 350, 690) else f"hay{i}", "high", 0.9),),
                           query="the Needle" if i in (5, 400, 650) else f"hay {i}") for i in range(700)]
    spans, ids = record(*searches)
    for start in range(0, len(spans), 2000):
        store.write(spans[start:start + 2000])
    durations = {t.trace_id: t.duration_ms for t in store.list_traces(TraceFilter(limit=None))}
    return store, ids, durations


@pytest.mark.parametrize("order", list(TraceOrder))
def test_the_store_sorts_every_match_not_a_page(many, order):
    store, ids, durations = many
    expected = sorted(ids, key=lambda t: (durations[t] if order.column == "duration_ms" else ids.index(t), t),
                      reverse=order.descending)
    assert [t.trace_id for t in store.list_traces(TraceFilter(order=order, limit=5))] == expected[:5]
    pages = [t.trace_id for offset in range(0, 700, 200)
             for t in store.list_traces(TraceFilter(order=order, limit=200, offset=offset))]
    assert pages == expected  # pages of one order meet end to end


@pytest.mark.parametrize("order", [TraceOrder.SLOWEST, TraceOrder.FASTEST])
def test_span_level_filters_come_in_the_filters_order(many, order):
    store, ids, durations = many

    def sort(chosen):
        return sorted(chosen, key=lambda t: (durations[t], t), reverse=order.descending)

    needle = [ids[i] for i in (2, 350, 690)]
    assert [t.trace_id for t in store.list_traces(TraceFilter(doc_id="needle", order=order))] == sort(needle)
    query = TraceFilter(attribute=(v.INPUT_VALUE, "NEEDLE"), order=order, limit=2)
    assert [t.trace_id for t in store.list_traces(query)] == sort([ids[i] for i in (5, 400, 650)])[:2]
    hay = TraceFilter(attribute=(v.INPUT_VALUE, "hay"), order=order, limit=3)  # read a batch at a time
    assert [t.trace_id for t in store.list_traces(hay)] == sort([t for i, t in enumerate(ids)
                                                                 if i not in (5, 400, 650)])[:3]


def test_the_document_filter_reads_the_index_on_both_stores(many):
    store, ids, _ = many
    assert store.capabilities.documents_indexed
    assert [t.trace_id for t in store.list_traces(TraceFilter(doc_id="needle"))] == [ids[690], ids[350], ids[2]]
    assert store.count(TraceFilter(doc_id="needle")) == 3
    assert store.count(TraceFilter(doc_id="needle", until=T0 + 400 * S)) == 2
    assert store.count(TraceFilter(doc_id="rerank-1")) == 700  # a candidate of every trace
    assert store.count(TraceFilter(doc_id="absent")) == 0 and store.list_traces(TraceFilter(doc_id="absent")) == []


def _docs(path) -> int:
    with sqlite3.connect(path) as raw:
        return raw.execute("SELECT count(*) FROM trace_docs").fetchone()[0]


def test_a_fifth_schema_store_gains_its_documents_when_a_writer_opens_it(tmp_path):
    path = tmp_path / "traces.sqlite"
    first = TraceStore(path)
    spans, ids = record(*(FakeSearch(start_ns=T0 + i * S, results=(("needle" if i == 1 else f"d{i}", "high", 0.9),))
                          for i in range(3)))
    first.write(spans)
    first.close()
    per_trace = _docs(path) // 3
    as_fifth_schema(path)
    reader = TraceStore(path)  # no writer yet: the document filter reads the spans
    assert [t.trace_id for t in reader.list_traces(TraceFilter(doc_id="needle"))] == [ids[1]]
    reader.close()
    writer = TraceStore(path).open()
    assert _docs(path) == 3 * per_trace > 0
    assert [t.trace_id for t in writer.list_traces(TraceFilter(doc_id="needle"))] == [ids[1]]
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 6
    assert writer.prune(keep_last=1) == 2 and _docs(path) == per_trace  # pruned with their traces
    writer.close()


def test_traces_list_takes_failed_and_order_and_export_refuses_an_order(tmp_path, capsys):
    import json

    from searchtrace.cli import main
    from searchtrace.home import Home

    spans, ids = record(*(FakeSearch(start_ns=T0 + i * S, stage_ms=ms) for i, ms in enumerate((2.0, 9.0, 5.0))))
    store = TraceStore(Home(tmp_path).traces)
    store.write(spans)
    store.close()
    assert main(["traces", "list", "--home", str(tmp_path), "--order", "slowest", "--format", "json"]) == 0
    assert [t["trace_id"] for t in json.loads(capsys.readouterr().out)] == [ids[1], ids[2], ids[0]]
    assert main(["traces", "list", "--home", str(tmp_path), "--failed", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["traces", "export", "--home", str(tmp_path), "--order", "slowest"]) == 2
    assert "--order goes with traces list" in capsys.readouterr().err
