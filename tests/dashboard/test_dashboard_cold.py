"""Cold starts: a search whose embed stage loaded the model is flagged, in the list and in the trace."""

from __future__ import annotations

from dataclasses import replace

from searchtrace.dashboard.data import SEARCHES, list_traces, waterfall
from searchtrace.home import Home
from searchtrace.traces import TraceStore
from searchtrace.traces import vocabulary as v

MS = 1_000_000


def write_search(store: TraceStore, start_ns: int, embed_ms: float, precomputed: bool = False,
                 run_id: str | None = None) -> str:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import set_span_in_context

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    attributes = {v.INPUT_VALUE: "q", v.MODE: "fast", **({v.RUN_ID: run_id} if run_id else {})}
    root = tracer.start_span("search", start_time=start_ns, attributes=attributes)
    embed = tracer.start_span("embed", context=set_span_in_context(root), start_time=start_ns + MS,
                              attributes={v.EMBED_PRECOMPUTED: precomputed})
    embed.end(end_time=start_ns + MS + int(embed_ms * MS))
    root.end(end_time=start_ns + 2 * MS + int(embed_ms * MS))
    store.write(exporter.get_finished_spans())
    return format(root.get_span_context().trace_id, "032x")


def test_cold_starts_are_flagged_and_eval_searches_are_not(tmp_path):
    store = TraceStore(Home(tmp_path).traces).open()
    cold = write_search(store, 10_000 * MS, 12_000.0)  # a CLI search loading the model: 12 s in embed
    warm = write_search(store, 20_000 * MS, 2.0)
    slow_eval = write_search(store, 30_000 * MS, 1500.0, precomputed=True, run_id="r1")
    store.close()
    listed = list_traces(tmp_path).set_index("trace_id")["cold"]
    assert (listed[cold], listed[warm], listed[slow_eval]) == ("likely", "", "")
    scanned = list_traces(tmp_path, replace(SEARCHES, attribute=(v.MODE, "fast"))).set_index("trace_id")["cold"]
    assert (scanned[cold], scanned[warm], scanned[slow_eval]) == ("likely", "", "")  # as listed, on both stores
    assert waterfall(tmp_path, cold).cold_ms == 12_000.0
    assert waterfall(tmp_path, warm).cold_ms is None and waterfall(tmp_path, slow_eval).cold_ms is None
