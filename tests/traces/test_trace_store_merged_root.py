"""The SQLite store writes a trace's root and search span (an eval's one ``search`` span is both) by one
statement, ``UPSERT_ROOT_SEARCH``, when the batch holds one of each: every ``traces`` row equals the one the
two statements leave, for any spans, batches, order and repeats (hypothesis), the rows already there included."""

from __future__ import annotations

import sqlite3
import tempfile
from functools import partial
from pathlib import Path
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from trace_fixtures import MS, T0

from searchtrace.traces import vocabulary as v
from searchtrace.traces.store import sqlite_sql as sql
from searchtrace.traces.store.sqlite import TraceStore

SHAPES = ("search", "search+step", "request+search", "request", "search+search", "request+search+search")
ROOT_ATTRS = st.fixed_dictionaries({}, optional={
    v.SOURCE: st.sampled_from(["serve", "mcp"]), v.ERROR_CODE: st.sampled_from(["TIMEOUT", "REFUSED"]),
    v.DATASET: st.sampled_from(["d1", "d2"]), v.HTTP_RESPONSE_STATUS_CODE: st.sampled_from([200, 500]),
    v.MCP_SESSION_ID: st.sampled_from(["s1"])})
SEARCH_ATTRS = st.fixed_dictionaries({v.MODE: st.sampled_from(["fast", "deep"])}, optional={
    v.SOURCE: st.sampled_from(["eval", "serve"]), v.ERROR_CODE: st.sampled_from(["SEARCH_FAILED"]), v.DATASET: st.sampled_from(["d1", "d3"]),
    v.INPUT_VALUE: st.sampled_from(["Ferry", "harbour"]), v.RUN_ID: st.sampled_from(["r1"]), v.QUERY_ID: st.sampled_from(["q1", "q2"]),
    v.TOP_K: st.sampled_from([5, 100]), v.RESULT_IDS: st.sampled_from([("a", "b"), ()]), v.SEARCH_COLD: st.booleans(),
    v.RESULT_BANDS: st.sampled_from([("high", "low")]), v.DEGRADED: st.sampled_from([("graph",)]), v.BEST_SCORE: st.sampled_from([0.5])})


class _Counting(IdGenerator):
    """Ids counted from 1 (the SDK's are random, which hypothesis cannot replay)."""

    def __init__(self) -> None:
        self.n = 0

    def generate_span_id(self) -> int:
        self.n += 1
        return self.n

    def generate_trace_id(self) -> int:
        self.n += 1
        return self.n


def _spans(traces: list[tuple[str, dict, list[dict]]]) -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(id_generator=_Counting())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    for i, (shape, root_attrs, searches) in enumerate(traces):
        names = shape.split("+")
        t = T0 + i * 1000 * MS
        attrs = root_attrs if names[0] == "request" else searches[0]
        with tracer.start_as_current_span(names[0], start_time=t, attributes=attrs):
            for j, name in enumerate(names[1:], 1):
                child = searches[j % len(searches)] if name == "search" else {}
                with tracer.start_as_current_span(name, start_time=t + j * MS, attributes=child):
                    pass
    return list(exporter.get_finished_spans())


@st.composite
def batches(draw) -> tuple[list[tuple[str, dict, list[dict]]], list[list[int]]]:
    """Traces of every shape (what to build), then their spans in any order (by index), some sent twice, cut
    into batches. Plain data only: the spans are built in the test, outside the strategy."""
    traces = draw(st.lists(st.tuples(st.sampled_from(SHAPES), ROOT_ATTRS, st.lists(SEARCH_ATTRS, min_size=2,
                                                                                      max_size=2)),
                           min_size=1, max_size=3))
    made = sum(len(shape.split("+")) for shape, _, _ in traces)
    resent = draw(st.lists(st.integers(0, made - 1), max_size=4))  # as after a retried export
    order = draw(st.permutations(list(range(made)) + resent))
    cuts = sorted(draw(st.sets(st.integers(1, len(order) - 1), max_size=3))) if len(order) > 1 else []
    return traces, [order[a:b] for a, b in zip([0, *cuts], [*cuts, len(order)])]


def _traces_table(path: Path, split: list[list[ReadableSpan]], merge: bool) -> list[tuple]:
    store = TraceStore(path)
    try:
        with mock.patch.object(sql, "plan", partial(sql.plan, merge=merge)):
            for batch in split:
                store.write(batch)
    finally:
        store.close()
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT * FROM traces ORDER BY trace_id").fetchall()


@settings(max_examples=300, deadline=None)
@given(batches())
def test_a_root_and_search_written_at_once_leave_the_row_the_two_statements_leave(drawn):
    traces, cut = drawn
    made = _spans(traces)
    assert len(made) == sum(len(shape.split("+")) for shape, _, _ in traces)
    split = [[made[i] for i in batch] for batch in cut]
    with tempfile.TemporaryDirectory() as tmp:
        merged = _traces_table(Path(tmp) / "merged.sqlite", split, merge=True)
        apart = _traces_table(Path(tmp) / "apart.sqlite", split, merge=False)
    assert merged == apart


def test_an_eval_s_search_span_is_written_by_the_merged_statement():
    """The case the merge is for (one root ``search`` span a trace) takes it: no sign of a test that cannot
    fail because the merged path never ran."""
    (span,) = _spans([("search", {}, [{v.MODE: "fast", v.SOURCE: "eval"}] * 2)])
    p = sql.plan([span])
    assert (p.roots, p.searches, len(p.root_searches)) == ([], [], 1)
    assert sql.plan([span], merge=False).root_searches == []


def test_a_search_s_source_and_error_stored_before_its_root_outrank_the_root_s(tmp_path):
    """One search stored first names the source and error; then the root and a second search naming neither
    come in one batch (merged): the row keeps the first search's, over the root's, as the two statements do."""
    first = {v.MODE: "fast", v.SOURCE: "eval", v.ERROR_CODE: "SEARCH_FAILED"}
    spans = _spans([("request+search+search", {v.SOURCE: "serve", v.ERROR_CODE: "REFUSED"}, [{v.MODE: "fast"},
                                                                                            first])])
    (root,) = [s for s in spans if s.name == "request"]
    (named,) = [s for s in spans if s.name == "search" and s.attributes and v.SOURCE in s.attributes]
    (bare,) = [s for s in spans if s is not root and s is not named]
    split = [[named], [root, bare]]
    merged = _traces_table(tmp_path / "merged.sqlite", split, merge=True)
    assert merged == _traces_table(tmp_path / "apart.sqlite", split, merge=False)
    with sqlite3.connect(tmp_path / "merged.sqlite") as conn:
        assert conn.execute("SELECT source, error_code FROM traces").fetchall() == [("eval", "SEARCH_FAILED")]
