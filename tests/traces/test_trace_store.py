"""The trace store's contract, on SQLite and on PostgreSQL: round trips, partial batches, every filter,
pagination, retention; then what only the SQLite file has (compression, schema upgrades, integrity)."""

from __future__ import annotations

import os
import sqlite3
import threading
from datetime import UTC, datetime

import pytest
from foreign_fixtures import as_fourth_schema
from trace_fixtures import MS, T0, FakeSearch, record

from searchtrace.names import Stage
from searchtrace.traces import vocabulary as v
from searchtrace.traces.spans.vocabulary import TraceKind
from searchtrace.traces.store import sqlite_sql as sql
from searchtrace.traces.store.sqlite import TraceFilter, TraceStore, to_ns

S = 1000 * MS


@pytest.fixture
def sqlite_store(tmp_path):
    s = TraceStore(tmp_path / "home" / "traces.sqlite")
    yield s
    s.close()


def test_constructor_does_no_io(tmp_path):
    TraceStore(tmp_path / "absent" / "traces.sqlite")
    assert not (tmp_path / "absent").exists()


def test_round_trip_keeps_every_span_parent_and_attribute(store):
    spans, (trace_id,) = record(FakeSearch(degraded=("graph",), run_id="run-1", query_id="q7"))
    assert store.write(spans) == 11
    detail = store.load_trace(trace_id)
    assert detail is not None and len(detail.spans) == 11
    by_id = {format(s.context.span_id, "016x"): s for s in spans}
    root = next(s for s in spans if s.parent is None)
    root_id = format(root.context.span_id, "016x")
    for rec in detail.spans:
        sdk = by_id[rec.span_id]
        assert rec.trace_id == trace_id
        assert rec.name == sdk.name
        assert rec.parent_id == (None if sdk.parent is None else root_id)
        assert (rec.start_ns, rec.end_ns) == (sdk.start_time, sdk.end_time)
        assert rec.attributes == dict(sdk.attributes)  # arrays come back as tuples, ints as ints
        assert rec.kind == "INTERNAL" and rec.scope == "searchtrace"
    assert [r.name for r in detail.spans] == ["search", "validate", "rewrite", "embed", "dense", "keyword", "graph",
                                              "fuse", "rerank", "filter", "shape"]
    graph = next(r for r in detail.spans if r.name == "graph")
    assert (graph.status, graph.status_message) == ("ERROR", "too slow")
    assert [(e.name, e.attributes) for e in graph.events] == [
        ("exception", {"exception.type": "TimeoutError", "exception.message": "too slow"})]
    assert graph.events[0].time_ns == graph.start_ns + 10
    dense = next(r for r in detail.spans if r.name == "dense").attributes
    assert dense[v.CANDIDATE_IDS] == ("d1", "d2", "d3", "dense-0", "dense-1")
    assert dense[v.CANDIDATE_SCORES] == (1.0, 0.9, 0.8, 0.7, 0.6)
    assert dense[v.CANDIDATE_COUNT] == 5
    assert detail.resource["telemetry.sdk.language"] == "python"


def test_summary_columns_come_from_the_root(store):
    spans, (trace_id,) = record(FakeSearch(degraded=("graph",), run_id="run-1", query_id="q7"))
    store.write(spans)
    s = store.load_trace(trace_id).summary
    assert s.trace_id == trace_id and s.start_ns == T0 and s.complete
    assert s.duration_ms == (10 * 2 * MS + 2000) / 1e6
    assert (s.mode, s.query, s.run_id, s.query_id, s.top_k) == (
        "graph", "Which river runs past the harbour town?", "run-1", "q7", 3)
    assert (s.best_score, s.no_confident, s.degraded, s.bands) == (0.81, False, ("graph",), ("high", "medium", "low"))
    assert (s.n_results, s.error_code, s.status, s.n_spans) == (3, None, "UNSET", 11)
    assert s.start == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)


def test_large_attributes_are_compressed_and_small_ones_stay_json(sqlite_store):
    spans, (trace_id,) = record(FakeSearch(candidates=100))
    sqlite_store.write(spans)
    detail = sqlite_store.load_trace(trace_id)
    assert {r.span_id: r.attributes for r in detail.spans} == {
        format(s.context.span_id, "016x"): dict(s.attributes) for s in spans}
    with sqlite3.connect(sqlite_store.path) as raw:
        types = dict(raw.execute("SELECT name, typeof(attributes) FROM spans"))
    assert types["dense"] == "blob" and types["search"] == "text" and types["validate"] == "text"


def test_children_before_root_arrive_in_separate_batches(store):
    spans, (trace_id,) = record(FakeSearch())
    children = [s for s in spans if s.parent is not None]
    root = [s for s in spans if s.parent is None]
    store.write(children[:4])
    store.write(children[4:])
    partial = store.load_trace(trace_id).summary
    assert (partial.complete, partial.mode, partial.n_spans) == (False, None, 10)
    assert partial.start_ns == min(s.start_time for s in children)
    assert partial.duration_ms == (max(s.end_time for s in children) - partial.start_ns) / 1e6
    assert store.list_traces(TraceFilter(mode="graph")) == []

    store.write(root)
    done = store.load_trace(trace_id).summary
    assert (done.complete, done.mode, done.n_spans, done.start_ns) == (True, "graph", 11, T0)
    assert done.duration_ms == (10 * 2 * MS + 2000) / 1e6
    store.write(children[:2])  # a re-export neither duplicates spans nor moves the root's timing
    assert store.load_trace(trace_id).summary == done


def test_root_first_then_children(store):
    spans, (trace_id,) = record(FakeSearch())
    store.write([s for s in spans if s.parent is None])
    store.write([s for s in spans if s.parent is not None])
    s = store.load_trace(trace_id).summary
    assert (s.complete, s.start_ns, s.duration_ms, s.n_spans) == (True, T0, (10 * 2 * MS + 2000) / 1e6, 11)


def test_unknown_trace_is_none(store):
    assert store.load_trace("0" * 32) is None


# -- filters -----------------------------------------------------------------------

SEARCHES = {
    "A": FakeSearch(start_ns=T0, run_id="run-1", source="http", dataset="sample"),
    "B": FakeSearch(start_ns=T0 + S, mode="fast", results=(("d9", "low", 0.1),), no_confident=True,
                    degraded=("graph",), query="Lantern Guild founder", source="mcp", dataset="sample"),
    "C": FakeSearch(start_ns=T0 + 2 * S, results=(("d4", "medium", 0.5),), stage_ms=30.0, run_id="run-1",
                    query="HARBOUR lights", source="eval", dataset="sample"),
    "D": FakeSearch(start_ns=T0 + 3 * S, error_code="VALIDATION_ERROR", query="100% harbour_"),
    "E": FakeSearch(start_ns=T0 + 4 * S, results=(("d1", "high", 0.9),), degraded=("keyword", "graph"),
                    run_id="run-2", query="Ærø ferry", source="http", dataset="other"),
}


@pytest.fixture
def filled(store):
    spans, ids = record(*SEARCHES.values())
    store.write(spans)
    return store, dict(zip(ids, SEARCHES)), dict(zip(SEARCHES, ids))


@pytest.mark.parametrize("flt, expected", [
    (TraceFilter(), "EDCBA"),
    (TraceFilter(since=T0 + 2 * S), "EDC"),
    (TraceFilter(since=datetime.fromtimestamp((T0 + 2 * S) // S, tz=UTC)), "EDC"),
    (TraceFilter(until=T0 + 2 * S), "BA"),
    (TraceFilter(since=T0 + S, until=T0 + 3 * S), "CB"),
    (TraceFilter(mode="fast"), "B"),
    (TraceFilter(mode="graph"), "EDCA"),
    (TraceFilter(band="high"), "EA"),
    (TraceFilter(band="medium"), "CA"),
    (TraceFilter(band="low"), "BA"),
    (TraceFilter(no_confident=True), "B"),
    (TraceFilter(no_confident=False), "ECA"),
    (TraceFilter(degraded=True), "EB"),
    (TraceFilter(degraded=False), "DCA"),
    (TraceFilter(degraded="graph"), "EB"),
    (TraceFilter(degraded="keyword"), "E"),
    (TraceFilter(degraded="dense"), ""),
    (TraceFilter(min_latency_ms=100), "C"),
    (TraceFilter(min_latency_ms=(10 * 2 * MS + 2000) / 1e6), "EDCBA"),
    (TraceFilter(run_id="run-1"), "CA"),
    (TraceFilter(run_id="run-3"), ""),
    (TraceFilter(query_text="harbour"), "DCA"),
    (TraceFilter(query_text="HARBOUR L"), "C"),
    (TraceFilter(query_text="ærø"), "E"),
    (TraceFilter(query_text="100%"), "D"),
    (TraceFilter(query_text="harb_ur"), ""),  # no LIKE wildcards
    (TraceFilter(query_text="bour_"), "D"),
    (TraceFilter(mode="graph", band="medium", run_id="run-1"), "CA"),
    (TraceFilter(degraded=True, band="high", query_text="ferry"), "E"),
    (TraceFilter(best_band="high"), "EA"),  # A has a result in every band: its best is high
    (TraceFilter(best_band="medium"), "C"),
    (TraceFilter(best_band="low"), "B"),
    (TraceFilter(sources=("http",)), "EA"),
    (TraceFilter(sources=("http", "mcp")), "EBA"),
    (TraceFilter(dataset="sample"), "CBA"),
    (TraceFilter(dataset="other", sources=("mcp",)), ""),
    (TraceFilter(dataset="sample", sources=("http", "mcp", "cli", "python"), best_band="low"), "B"),
    (TraceFilter(errors=True), "D"),
    (TraceFilter(errors=False), "ECBA"),
    (TraceFilter(kind=TraceKind.SEARCH), "EDCBA"),
    (TraceFilter(kind=TraceKind.MODEL_LOAD), ""),
    (TraceFilter(kind=TraceKind.SEARCH, errors=True, query_text="100%"), "D"),
])
def test_every_filter(filled, flt, expected):
    store, name_of, _ = filled
    assert "".join(name_of[s.trace_id] for s in store.list_traces(flt)) == expected
    assert store.count(flt) == len(expected)


@pytest.mark.parametrize("limit, offset, expected", [
    (2, 0, "ED"), (2, 2, "CB"), (2, 4, "A"), (2, 6, ""), (None, 1, "DCBA"), (0, 0, ""), (50, 0, "EDCBA")])
def test_pagination(filled, limit, offset, expected):
    store, name_of, _ = filled
    assert "".join(name_of[s.trace_id] for s in store.list_traces(TraceFilter(limit=limit, offset=offset))) == expected


def test_error_trace_summary(filled):
    store, _, id_of = filled
    d = store.load_trace(id_of["D"]).summary
    assert (d.error_code, d.status, d.n_spans, d.best_score, d.no_confident, d.bands) == (
        "VALIDATION_ERROR", "ERROR", 2, None, None, ())


def test_bad_filters_are_rejected():
    with pytest.raises(ValueError, match="band must be one of high, medium, low"):
        TraceFilter(band="top")
    with pytest.raises(ValueError, match="limit and offset must be >= 0"):
        TraceFilter(offset=-1)
    with pytest.raises(ValueError, match="best_band must be one of high, medium, low"):
        TraceFilter(best_band="top")
    with pytest.raises(ValueError, match=r"sources must be among http, mcp, cli, eval, python, otlp, .*got 'web'"):
        TraceFilter(sources=("http", "web"))


def _as_second_schema(path):
    """The store as schema 2 left it: without the impression and fetch columns (schema 3), nor the kind, cold
    and status_code ones (schema 4), nor schema 5's, and with root spans that filled no source or error code (a
    request that ran no search had neither)."""
    as_fourth_schema(path)
    conn = sqlite3.connect(path)
    for column in ("session_id", "result_ids", "fetched_ids", "fetch_of"):
        conn.execute(f"ALTER TABLE traces DROP COLUMN {column}")
    conn.execute("UPDATE traces SET source = NULL, error_code = NULL WHERE kind != 'search'")
    for index in ("traces_kind", "traces_status"):
        conn.execute(f"DROP INDEX {index}")
    for column in ("kind", "cold", "status_code"):
        conn.execute(f"ALTER TABLE traces DROP COLUMN {column}")
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()


def _as_first_schema(path):
    """The store as a version without the source and dataset columns (nor any later one) left it."""
    _as_second_schema(path)
    conn = sqlite3.connect(path)
    conn.execute("DROP INDEX traces_dataset")
    conn.execute("ALTER TABLE traces DROP COLUMN source")
    conn.execute("ALTER TABLE traces DROP COLUMN dataset")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()


def test_a_store_of_the_first_schema_is_read_then_brought_up_to_date(tmp_path):
    path = tmp_path / "traces.sqlite"
    first = TraceStore(path)
    first.write(record(FakeSearch(source="http", dataset="sample"))[0])
    first.close()
    _as_first_schema(path)
    reader = TraceStore(path)
    assert len(reader.list_traces()) == 1
    assert reader.count(TraceFilter(dataset="sample")) == 0  # its traces recorded no dataset column
    assert list(reader.scan(TraceFilter(sources=("http",), limit=None))) == []
    reader.close()
    writer = TraceStore(path)
    spans, (newer,) = record(FakeSearch(source="http", dataset="sample", start_ns=T0 + S))
    writer.write(spans)
    assert [s.trace_id for s in writer.list_traces(TraceFilter(dataset="sample", sources=("http",)))] == [newer]
    assert writer.count() == 2
    writer.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone() == (sql.SCHEMA_VERSION,)
    conn.close()


def test_rows_of_a_first_schema_store_are_inserted(tmp_path):
    """What ``traces repair`` salvages from a store of the first schema fits the new one."""
    old = tmp_path / "old.sqlite"
    first = TraceStore(old)
    spans, (trace_id,) = record(FakeSearch(query="kept"))
    first.write(spans)
    first.close()
    _as_first_schema(old)
    conn = sqlite3.connect(old)
    traces, rows = conn.execute("SELECT * FROM traces").fetchall(), conn.execute("SELECT * FROM spans").fetchall()
    conn.close()
    new = TraceStore(tmp_path / "new.sqlite")
    new.insert_rows(traces, rows)
    detail = new.load_trace(trace_id)
    assert detail is not None and detail.summary.query == "kept" and len(detail.spans) == 11
    assert detail.summary.kind is TraceKind.SEARCH  # classified as an upgrade classifies: listed as a search
    new.close()


def test_scan_reads_oldest_first_in_batches(filled):
    store, name_of, _ = filled
    batches = list(store.scan(TraceFilter(limit=None), batch=2))
    assert [len(b) for b in batches] == [2, 2, 1]
    assert "".join(name_of[s.trace_id] for b in batches for s in b) == "ABCDE"
    assert "".join(name_of[s.trace_id] for b in store.scan(TraceFilter(mode="graph", limit=2)) for s in b) == "AC"


def test_naive_datetimes_are_local_time():
    naive = datetime(2024, 1, 2, 3, 4, 5)
    assert to_ns(naive) == to_ns(naive.astimezone()) == int(naive.timestamp()) * S


# -- retention ---------------------------------------------------------------------

DAY = 86_400 * S


def _span_count(store) -> int:
    """Spans stored, read past the store's API (so a prune that left spans behind shows)."""
    if isinstance(store, TraceStore):
        with sqlite3.connect(store.path) as raw:
            return raw.execute("SELECT count(*) FROM spans").fetchone()[0]
    with store.db.connection() as conn:
        return conn.execute("SELECT count(*) FROM st_spans").fetchone()[0]


def test_prune_by_age(store):
    now = T0 + 30 * DAY
    spans, ids = record(*(FakeSearch(start_ns=now - d * DAY) for d in (10, 6, 2, 0)))
    store.write(spans)
    assert store.prune(older_than_days=5, now_ns=now) == 2
    assert [s.trace_id for s in store.list_traces()] == [ids[3], ids[2]]
    assert _span_count(store) == 22
    assert store.prune(older_than_days=5, now_ns=now) == 0


def test_prune_by_count(store):
    spans, ids = record(*(FakeSearch(start_ns=T0 + i * S) for i in range(5)))
    store.write(spans)
    assert store.prune(keep_last=2) == 3
    assert [s.trace_id for s in store.list_traces()] == [ids[4], ids[3]]
    assert _span_count(store) == 22
    assert store.prune(keep_last=0) == 2 and store.count() == 0 and _span_count(store) == 0


def test_prune_by_age_or_count(store):
    now = T0 + 30 * DAY
    spans, ids = record(*(FakeSearch(start_ns=now - d * DAY) for d in (10, 3, 2, 1)))
    store.write(spans)
    assert store.prune(older_than_days=5, keep_last=2, now_ns=now) == 2
    assert [s.trace_id for s in store.list_traces()] == [ids[3], ids[2]]


def test_prune_needs_an_option(store):
    with pytest.raises(ValueError, match="older_than_days and/or keep_last"):
        store.prune()


# -- integrity and threads ---------------------------------------------------------


def test_integrity_check(sqlite_store, tmp_path):
    spans, _ = record(*(FakeSearch(start_ns=T0 + i * S, candidates=100) for i in range(20)))
    sqlite_store.write(spans)
    assert sqlite_store.integrity_check()
    sqlite_store.close()
    broken = tmp_path / "broken.sqlite"
    data = bytearray(sqlite_store.path.read_bytes())
    data[4096 * 3: 4096 * 6] = b"\xff" * (4096 * 3)  # scribble over b-tree pages
    broken.write_bytes(bytes(data))
    assert TraceStore(broken).integrity_check() is False


def test_reads_while_another_thread_writes(store):
    spans, _ = record(*(FakeSearch(start_ns=T0 + i * S) for i in range(40)))
    store.open()
    errors: list[BaseException] = []

    def write() -> None:
        try:
            for i in range(0, len(spans), 22):
                store.write(spans[i:i + 22])
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    writer = threading.Thread(target=write)
    writer.start()
    while writer.is_alive():
        assert len(store.list_traces(TraceFilter(limit=None))) <= 40
    writer.join()
    assert errors == [] and store.count() == 40


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_forked_child_uses_its_own_connection(sqlite_store):
    spans, _ = record(FakeSearch(), FakeSearch(start_ns=T0 + S))
    sqlite_store.write(spans[:11])  # the parent's connection exists before the fork
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        try:
            sqlite_store.write(spans[11:])
            os._exit(0 if sqlite_store.count() == 2 else 1)
        except BaseException:  # noqa: BLE001
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert sqlite_store.count() == 2 and sqlite_store.integrity_check()


def test_encoding_matches_the_stdlib_json():
    """orjson's JSON equals the stdlib's; what orjson refuses (an integer over 64 bits) goes to the stdlib."""
    import json

    import numpy as np

    from searchtrace.traces.store import rows as sql

    value = {"ids": ["a", "é", "40212412"], "scores": [0.1, 1 / 3, 1e-05, 2.5e20], "n": 3, "ok": True, "none": None,
             "kind": Stage.DENSE, "tuple": (1, 2), "np": np.float64(0.25), "huge": 2**70}
    assert json.loads(sql.dump(value)) == json.loads(json.dumps(value))  # 2**70 falls back to the stdlib
    assert sql.unpack(sql.pack({"x": list(range(1000))})) == {"x": list(range(1000))}  # compressed
    assert sql.pack({"x": 1}) == '{"x":1}'  # small: plain text


# -- impressions and fetches (schema 3) -------------------------------------------------


def test_impressions_and_fetches_are_read_from_columns_oldest_first(store):
    from trace_fixtures import Served, record_served

    from searchtrace.traces import Fetch, Impression, InteractionFilter

    spans, (mcp, http, cli, other) = record_served(
        Served(T0, shown=("d1", "d2", "d3"), session="s1"),
        Served(T0 + S, shown=("d3", "d1"), source="http", query=None),
        Served(T0 + 2 * S, shown=("d1",), source="cli"),  # not served: never an impression
        Served(T0 + 3 * S, shown=("d1",), dataset="other"))
    store.write(spans)
    spans, (fetch, named, _) = record_served(
        Served(T0 + 4 * S, fetched=("d2", "d9"), session="s1"),
        Served(T0 + 5 * S, fetched=("d1",), follows=http, source="http"),
        Served(T0 + 6 * S, fetched=("d1",), failed=True))  # answered an error: fetched nothing
    store.write(spans)
    flt = InteractionFilter("sample")
    read = [x for batch in store.interactions(flt, batch=2) for x in batch]
    assert read == [Impression(mcp, T0, "s1", "Which river runs past the harbour town?", None, ("d1", "d2", "d3")),
                    Impression(http, T0 + S, None, None, None, ("d3", "d1")),
                    Fetch(fetch, T0 + 4 * S, "s1", None, ("d2", "d9")),
                    Fetch(named, T0 + 5 * S, None, http, ("d1",))]
    assert store.count_interactions(flt) == 4
    assert [x.trace_id for b in store.interactions(InteractionFilter("sample", since=T0 + S, until=T0 + 5 * S))
            for x in b] == [http, fetch]
    assert [x.trace_id for b in store.interactions(InteractionFilter("sample", sources=("cli",))) for x in b] == [
        cli, fetch, named]
    assert [x.trace_id for b in store.interactions(InteractionFilter("other")) for x in b] == [other]
    if isinstance(store, TraceStore):
        row = sqlite3.connect(store.path).execute(
            "SELECT session_id, result_ids, fetched_ids, fetch_of, dataset FROM traces WHERE trace_id = ?",
            (named,)).fetchone()
        assert row == (None, None, '["d1"]', http, "sample")
    else:
        with store.db.connection() as conn:
            row = conn.execute("SELECT session_id, result_ids, fetched_ids, fetch_of, dataset FROM st_traces "
                               "WHERE trace_id = %s", (named,)).fetchone()
        assert row == (None, None, ["d1"], http, "sample")


def test_a_second_schema_store_gains_the_impression_columns(tmp_path):
    from trace_fixtures import Served, record_served

    from searchtrace.traces import InteractionFilter

    path = tmp_path / "traces.sqlite"
    first = TraceStore(path)
    first.write(record_served(Served(T0, shown=("d1",)))[0])
    first.close()
    _as_second_schema(path)
    reader = TraceStore(path)
    assert list(reader.interactions(InteractionFilter("sample"))) == []  # no column yet: nothing recorded it
    assert reader.count_interactions(InteractionFilter("sample")) == 0
    reader.close()
    writer = TraceStore(path)
    spans, (newer,) = record_served(Served(T0 + S, shown=("d2",), session="s"))
    writer.write(spans)
    read = [x for b in writer.interactions(InteractionFilter("sample")) for x in b]
    assert [(x.trace_id, x.shown, x.session_id) for x in read] == [(newer, ("d2",), "s")]
    writer.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone() == (sql.SCHEMA_VERSION,)
    conn.close()


# -- what a trace is: searches, model loads, other served requests --------------------------------


def _spans(*build):
    """Finished spans of the given builders, each ``build(tracer)`` recording one trace; their trace ids."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    ids = [b(tracer) for b in build]
    return list(exporter.get_finished_spans()), ids


def _load(tracer):
    with tracer.start_as_current_span(v.EMBEDDER_LOAD_SPAN, start_time=T0) as span:
        return format(span.get_span_context().trace_id, "032x")


def _served(status, code=None, search_code=None, search=True, source="http", name="POST /v1/search", at=1):
    """A server span (as ``Service.server_span`` ends one) over a search span (unless ``search`` is False)."""
    from opentelemetry.trace import SpanKind, Status, StatusCode

    def build(tracer):
        attributes = {v.SOURCE: source, **({v.HTTP_RESPONSE_STATUS_CODE: status} if status else {})}
        with tracer.start_as_current_span(name, kind=SpanKind.SERVER, start_time=T0 + at * S,
                                          attributes=attributes) as server:
            if search:
                with tracer.start_as_current_span(v.SEARCH_SPAN, attributes={v.SOURCE: source, v.MODE: "fast"}) as s:
                    if search_code:
                        s.set_attribute(v.ERROR_CODE, search_code)
                        s.set_status(Status(StatusCode.ERROR, "bad"))
            if code:
                server.set_attribute(v.ERROR_CODE, code)
                server.set_status(Status(StatusCode.ERROR, code.lower()))
            return format(server.get_span_context().trace_id, "032x")

    return build


KINDS = {"load": _load, "ok": _served(200), "invalid": _served(400, "VALIDATION_ERROR", "VALIDATION_ERROR", at=2),
         "refused": _served(429, "OVERLOADED", search=False, at=3),
         "timeout": _served(None, "TIMEOUT", source="mcp", name="tools/call search", at=4),
         "docs": _served(200, search=False, name="GET /v1/docs", at=5)}


@pytest.mark.parametrize("root_first", [False, True])
def test_a_trace_is_a_search_a_model_load_or_another_request(store, root_first):
    spans, ids = _spans(*KINDS.values())
    name_of = dict(zip(ids, KINDS))
    roots = [s for s in spans if s.parent is None]
    children = [s for s in spans if s.parent is not None]
    for batch in ([roots, children] if root_first else [children, roots]):  # in either order
        store.write(batch)
    got = {name_of[t.trace_id]: (t.kind, t.root_name, t.source, t.error_code, t.status_code, t.status)
           for t in store.list_traces(TraceFilter())}
    assert got == {
        "load": (TraceKind.MODEL_LOAD, v.EMBEDDER_LOAD_SPAN, None, None, None, "UNSET"),
        "ok": (TraceKind.SEARCH, "POST /v1/search", "http", None, 200, "UNSET"),
        "invalid": (TraceKind.SEARCH, "POST /v1/search", "http", "VALIDATION_ERROR", 400, "ERROR"),
        "refused": (TraceKind.OTHER, "POST /v1/search", "http", "OVERLOADED", 429, "ERROR"),
        "timeout": (TraceKind.SEARCH, "tools/call search", "mcp", "TIMEOUT", None, "ERROR"),  # the search had none
        "docs": (TraceKind.OTHER, "GET /v1/docs", "http", None, 200, "UNSET")}

    def listed(**fields):
        return {name_of[t.trace_id] for t in store.list_traces(TraceFilter(**fields))}

    assert listed(kind=TraceKind.SEARCH) == {"ok", "invalid", "timeout"} and store.count(
        TraceFilter(kind=TraceKind.SEARCH)) == 3
    assert listed(kind=TraceKind.MODEL_LOAD) == {"load"} and listed(kind=TraceKind.OTHER) == {"refused", "docs"}
    assert listed(errors=True) == {"invalid", "refused", "timeout"}
    assert listed(kind=TraceKind.SEARCH, min_latency_ms=0) == {"ok", "invalid", "timeout"}  # never a load


def test_a_search_after_the_model_loaded_is_marked_cold(store):
    def cold(flag):
        def build(tracer):
            with tracer.start_as_current_span(v.SEARCH_SPAN, attributes={v.SEARCH_COLD: flag}) as span:
                return format(span.get_span_context().trace_id, "032x")
        return build

    spans, (first, later) = _spans(cold(True), cold(False))
    plain, (older,) = record(FakeSearch())  # recorded before the flag was
    store.write(spans + plain)
    assert {t.trace_id: t.cold for t in store.list_traces()} == {first: True, later: False, older: None}


def test_a_store_of_the_second_schema_reads_kinds_then_a_writer_records_them(tmp_path):
    path = tmp_path / "traces.sqlite"
    first = TraceStore(path)
    spans, ids = _spans(*KINDS.values())
    first.write(spans)
    first.close()
    name_of = dict(zip(ids, KINDS))
    _as_second_schema(path)
    reader = TraceStore(path)  # no writer has opened it: kinds from the other columns, as the writer will store them
    by_kind = {k: {name_of[t.trace_id] for t in reader.list_traces(TraceFilter(kind=k))} for k in TraceKind}
    assert by_kind == {TraceKind.SEARCH: {"ok", "invalid", "timeout"}, TraceKind.MODEL_LOAD: {"load"},
                       TraceKind.OTHER: {"refused", "docs"}}
    assert {t.kind for t in reader.list_traces()} == {None} and reader.count(TraceFilter(errors=True)) == 3
    reader.close()
    writer = TraceStore(path).open()
    assert {name_of[t.trace_id]: t.kind for t in writer.list_traces()} == {
        "load": TraceKind.MODEL_LOAD, "ok": TraceKind.SEARCH, "invalid": TraceKind.SEARCH,
        "timeout": TraceKind.SEARCH, "refused": TraceKind.OTHER, "docs": TraceKind.OTHER}
    writer.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone() == (sql.SCHEMA_VERSION,)
    conn.close()


def test_span_durations_read_the_named_spans_of_the_given_traces(store):
    spans, (a, b) = record(FakeSearch(), FakeSearch(start_ns=T0 + S, stage_ms=30.0))
    store.write(spans)
    got = store.span_durations([a, b.upper()], ["dense", "search"])
    assert sorted(got) == sorted([(a, "dense", 2.0), (a, "search", (10 * 2 * MS + 2000) / 1e6),
                                  (b, "dense", 30.0), (b, "search", (10 * 30 * MS + 2000) / 1e6)])


def test_the_document_filter_covers_the_whole_store_newest_first(store):
    """A document named in any id list of any span, however far back, newest first; the other filters, the
    offset and the limit apply as to any list, and the count agrees."""
    searches = [FakeSearch(start_ns=T0 + i * S, results=(("needle" if i in (3, 650) else f"hay{i}", "high", 0.9),),
                           candidates=3, mode="fast" if i == 3 else "graph") for i in range(700)]
    spans, ids = record(*searches)
    for i in range(0, len(spans), 1000):
        store.write(spans[i:i + 1000])
    found = store.list_traces(TraceFilter(doc_id="needle", limit=200))
    assert [t.trace_id for t in found] == [ids[650], ids[3]]  # far beyond the newest 500, newest first
    assert [t.trace_id for t in store.list_traces(TraceFilter(doc_id="needle", mode="fast"))] == [ids[3]]
    assert [t.trace_id for t in store.list_traces(TraceFilter(doc_id="needle", limit=1, offset=1))] == [ids[3]]
    assert store.list_traces(TraceFilter(doc_id="absent")) == []
    both = TraceFilter(doc_id="needle", attribute=(v.MODE, "FAST"))  # a document and an attribute: both hold
    assert [t.trace_id for t in store.list_traces(both)] == [ids[3]]
    assert store.count(TraceFilter(doc_id="needle")) == 2 and store.count(TraceFilter(doc_id="needle", mode="fast")) == 1
    # a candidate only (not a result) is found too: every id list of every span counts
    assert [t.trace_id for t in store.list_traces(TraceFilter(doc_id="dense-0", limit=3))] == ids[:-4:-1]
    scanned = [t.trace_id for batch in store.scan(TraceFilter(doc_id="needle", limit=None), batch=100) for t in batch]
    assert scanned == [ids[3], ids[650]]  # oldest first


def test_the_attribute_filter_covers_the_whole_store(store):
    """An attribute's value (any case; an array's items joined) found in any span of any trace, newest first,
    however far back."""
    searches = [FakeSearch(start_ns=T0 + i * S, candidates=3, mode="fast" if i % 2 else "graph",
                           query="the Needle in the haystack" if i in (1, 4, 640) else f"hay {i}")
                for i in range(650)]
    spans, ids = record(*searches)
    store.write(spans)
    query = (v.INPUT_VALUE, "NEEDLE")
    assert [t.trace_id for t in store.list_traces(TraceFilter(attribute=query, limit=200))] == [
        ids[640], ids[4], ids[1]]
    assert [t.trace_id for t in store.list_traces(TraceFilter(attribute=query, mode="fast"))] == [ids[1]]
    assert [t.trace_id for t in store.list_traces(TraceFilter(attribute=query, limit=1, offset=1))] == [ids[4]]
    assert store.count(TraceFilter(attribute=query)) == 3
    dense = (v.CANDIDATE_IDS, "d1, d2")  # an array: its items joined by ", "
    assert len(store.list_traces(TraceFilter(attribute=dense, limit=None))) == 650
    assert store.list_traces(TraceFilter(attribute=("no.such.key", "x"))) == []
    with pytest.raises(ValueError, match="attribute must be"):
        TraceFilter(attribute=("", "x"))


def test_a_store_declares_what_it_does_rather_than_being_asked_its_class(store):
    caps = store.capabilities
    assert caps.shared is (not caps.reclaims_space_on_prune) is caps.span_filters_fast
    assert caps.documents_indexed  # SQLite's trace_docs (schema 6), PostgreSQL's doc_ids
    assert (store.size_bytes() is None) is caps.shared and caps.write_timeout_ms > 0
