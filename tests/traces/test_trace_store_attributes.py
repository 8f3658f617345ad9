"""The attribute filter on both stores against brute force over the stored spans (SQLite answers it from
``trace_attrs``, schema 6); then what only the SQLite file has: no span read for a key without long values,
the index kept by prune and repair, and filled once for a store made without it."""

from __future__ import annotations

import math
import sqlite3

import orjson
import pytest
from foreign_fixtures import as_fifth_schema
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util.types import Attributes
from trace_fixtures import MS, T0

from searchtrace.traces.store.span_match import has_attribute
from searchtrace.traces.store.sqlite import TraceFilter, TraceStore

S = 1000 * MS
N = 700  # more than a batch of newest_matching (500)

QUERIES = [("app.note", "STRASSE"),  # one trace, "Straße" casefolded
           ("app.note", "note 69"), ("app.tenant", "T3"), ("app.flag", "true"), ("app.code", "42"),
           ("app.score", "71428"), ("app.ids", "rare-id, b"),  # a short array, its items joined
           ("app.ids", "x99"),  # only in long arrays
           ("app.text", "zebra"),  # past the first 200 characters of one long value
           ("app.text", "aaa"), ("app.note", ""), ("absent.key", "x"), ("app.tenant", "t3, t4"),
           ("app.odd", "none"), ("app.odd", "e+21"), ("app.odd", "0.5")]


def _traces(n: int = N):
    """``n`` traces, a root and a step span each, with attributes of every kind: rare, common, arrays short and
    long, numbers, booleans, text longer than the index holds."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    for i in range(n):
        root: Attributes = {"app.tenant": f"t{i % 7}", "app.flag": i % 2 == 0}
        with tracer.start_as_current_span("request", start_time=T0 + i * S, attributes=root):
            step: Attributes = {"app.note": "Straße" if i == 333 else f"note {i}", "app.score": i / 7, "app.code": i,
                    "app.ids": ("Rare-ID", "b") if i % 3 == 0 else tuple(f"x{j}" for j in range(100)),
                    "app.text": "a" * 300 + (" Zebra" if i == 500 else ""),
                    # read back otherwise than written: a float, an integer over 64 bits
                    "app.odd": math.nan if i == 9 else 2**70 + i if i == 7 else 0.5}
            with tracer.start_as_current_span("step", start_time=T0 + i * S + MS, attributes=step):
                pass
    return list(exporter.get_finished_spans())


def _brute(store, flt: TraceFilter) -> list[str]:
    """The traces one of whose stored spans matches ``flt``'s attribute, newest first: every span's attributes
    read from the store's JSON as the scan before ``trace_attrs`` read them (an integer over 64 bits comes back a
    float there, NaN as null: ``load_trace`` reads them otherwise)."""
    assert flt.attribute is not None
    listed = store.list_traces(TraceFilter(limit=None))
    matching = {trace_id for trace_id, text in store._span_attributes([t.trace_id for t in listed])
                if has_attribute(orjson.loads(text), *flt.attribute)}
    kept = [t for t in listed if t.trace_id in matching]
    return [t.trace_id for t in sorted(kept, key=lambda t: (t.start_ns, t.trace_id), reverse=True)]


@pytest.fixture
def filled(store):
    store.write(_traces())
    return store


def test_the_attribute_filter_finds_exactly_what_a_scan_of_the_spans_finds(filled):
    for key, text in QUERIES:
        flt = TraceFilter(attribute=(key, text), limit=None)
        expected = _brute(filled, flt)
        assert [t.trace_id for t in filled.list_traces(flt)] == expected, (key, text)
        assert filled.count(flt) == len(expected), (key, text)
        page = TraceFilter(attribute=(key, text), limit=5, offset=2)
        assert [t.trace_id for t in filled.list_traces(page)] == expected[2:7], (key, text)
    assert len(_brute(filled, TraceFilter(attribute=("app.note", "STRASSE")))) == 1  # the rare ones are there
    assert len(_brute(filled, TraceFilter(attribute=("app.text", "zebra")))) == 1
    assert len(_brute(filled, TraceFilter(attribute=("app.odd", "none")))) == 1  # NaN stored as null
    assert len(_brute(filled, TraceFilter(attribute=("app.odd", "e+21")))) == 1  # 2**70 read as a float


def test_the_attribute_filter_with_other_filters_and_a_time_range(filled):
    newest = filled.list_traces(TraceFilter(limit=1))[0]
    window = TraceFilter(since=newest.start_ns - 69 * S, limit=None)  # the newest 70
    inside = {t.trace_id for t in filled.list_traces(window)}
    flt = TraceFilter(attribute=("app.tenant", "t3"), since=window.since, limit=None)
    expected = [t for t in _brute(filled, flt) if t in inside]
    assert [t.trace_id for t in filled.list_traces(flt)] == expected and len(expected) == 10
    assert filled.count(flt) == 10


def test_a_rare_value_is_read_from_the_index_without_a_span(tmp_path, monkeypatch):
    store = TraceStore(tmp_path / "traces.sqlite")
    store.write(_traces(50))

    def no_spans(trace_ids):
        raise AssertionError(f"spans read for {len(trace_ids)} traces")

    monkeypatch.setattr(store, "_span_attributes", no_spans)
    rare = TraceFilter(attribute=("app.note", "strasse"))
    assert len(store.list_traces(rare)) == 0 and store.count(rare) == 0  # i == 333 is not among 50
    assert store.count(TraceFilter(attribute=("app.note", "NOTE 4"))) == 11  # 4, 40-49
    with pytest.raises(AssertionError, match="spans read"):  # a key with long values: its candidates are read
        store.list_traces(TraceFilter(attribute=("app.text", "zebra")))
    store.close()


def _rows(path, *, orphans: bool = False) -> tuple[int, int]:
    """How many rows ``trace_attrs`` and ``trace_attrs_long`` hold (``orphans``: of traces no longer stored),
    but app.odd's: filled from the stored JSON, 2**70 read back as a float is short, written as an int long."""
    where = " WHERE key != 'app.odd'" + (" AND trace_id NOT IN (SELECT trace_id FROM traces)" if orphans else "")
    with sqlite3.connect(path) as raw:
        return (raw.execute(f"SELECT count(*) FROM trace_attrs{where}").fetchone()[0],
                raw.execute(f"SELECT count(*) FROM trace_attrs_long{where}").fetchone()[0])


def test_an_older_store_gains_its_attributes_once_and_prune_keeps_them(tmp_path):
    path = tmp_path / "traces.sqlite"
    first = TraceStore(path)
    first.write(_traces(30))
    first.close()
    written = _rows(path)
    as_fifth_schema(path)  # no trace_attrs either (nor a schema 6 made before them)
    reader = TraceStore(path)  # no writer yet: the spans are read
    assert reader.count(TraceFilter(attribute=("app.note", "note 2"))) == 11
    reader.close()
    writer = TraceStore(path).open()
    assert _rows(path) == written and written[0] > 0 and written[1] > 0
    assert writer.count(TraceFilter(attribute=("app.note", "note 2"))) == 11
    assert writer.prune(keep_last=10) == 20
    assert _rows(path, orphans=True) == (0, 0) and 0 < _rows(path)[0] < written[0]  # pruned with their traces
    assert writer.count(TraceFilter(attribute=("app.note", "note 2"))) == 10  # the newest 10 kept: 20-29
    assert writer.count(TraceFilter(attribute=("app.note", "note 1"))) == 0
    writer.close()


def test_rows_a_repair_copies_gain_their_attributes(tmp_path):
    source = TraceStore(tmp_path / "a.sqlite")
    source.write(_traces(20))
    with sqlite3.connect(tmp_path / "a.sqlite") as raw:
        traces = raw.execute("SELECT * FROM traces").fetchall()
        spans = raw.execute("SELECT * FROM spans").fetchall()
    source.close()
    copy = TraceStore(tmp_path / "b.sqlite")
    copy.insert_rows(traces, spans)
    assert _rows(tmp_path / "b.sqlite") == _rows(tmp_path / "a.sqlite")
    assert copy.count(TraceFilter(attribute=("app.note", "note 1"))) == 11
    copy.close()


@given(st.one_of(st.text(max_size=260), st.text(alphabet="ßﬁİŉ\x00aA", max_size=120)))
def test_a_text_s_shown_value_is_what_the_general_path_shows(text):
    """Text (the common case) has its own path in ``shown_value``: the same as any value's, at every length and
    with characters whose casefold is longer ("ß" is "ss") or a NUL."""
    from searchtrace.traces.store.sqlite_sql import _shown_any, shown_value

    assert shown_value(text) == _shown_any(text)


def test_a_write_plan_reads_the_span_s_attributes_as_the_sdk_holds_them():
    """``plan`` reads each span's attributes once, as a dict: the same rows as from the SDK's own mapping."""
    from dataclasses import astuple

    from opentelemetry.sdk.trace import ReadableSpan

    from searchtrace.traces.store.sqlite_sql import plan, span_row

    spans = _traces(30)
    assert [span_row(s, dict(s.attributes or {})) for s in spans] == [span_row(s) for s in spans]
    bare = [ReadableSpan(name=s.name, context=s.context, parent=s.parent, resource=s.resource,
                         attributes=dict(s.attributes or {}), events=s.events, kind=s.kind, status=s.status,
                         start_time=s.start_time, end_time=s.end_time, instrumentation_scope=s.instrumentation_scope)
            for s in spans]
    assert astuple(plan(spans)) == astuple(plan(bare))
