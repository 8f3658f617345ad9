"""Spans flushed before a ``kill -9`` survive it, and the store stays consistent."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from searchtrace.traces.store.sqlite import TraceFilter, TraceStore

TESTS = Path(__file__).resolve().parents[1]
N = 30

WRITER = r"""
import sys
sys.path[:0] = [sys.argv[3], sys.argv[4]]
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from trace_fixtures import FakeSearch, emulate_search
from searchtrace.traces.export.exporter import StoreSpanExporter
from searchtrace.traces.store.sqlite import TraceStore

provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
provider.add_span_processor(BatchSpanProcessor(StoreSpanExporter(TraceStore(sys.argv[1])), schedule_delay_millis=5))
tracer = provider.get_tracer("searchtrace")
for i in range(int(sys.argv[2])):
    emulate_search(tracer, FakeSearch(run_id="flushed", start_ns=10**18 + i, candidates=100))
provider.force_flush()
print("flushed", flush=True)
i = 0
while True:  # keep the exporter busy committing until the kill
    emulate_search(tracer, FakeSearch(run_id="after", start_ns=2 * 10**18 + i, candidates=100))
    i += 1
"""


@pytest.mark.parametrize("delay_s", [0.0, 0.3, 0.8])
def test_flushed_traces_survive_sigkill(tmp_path, delay_s):
    path = tmp_path / "traces.sqlite"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(N), str(TESTS.parent), str(TESTS)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.strip() == "flushed", proc.stderr.read()
        time.sleep(delay_s)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL

    store = TraceStore(path)
    try:
        assert store.integrity_check()
        flushed = store.list_traces(TraceFilter(run_id="flushed", limit=None))
        assert len(flushed) == N
        assert all(s.complete and s.n_spans == 11 for s in flushed)
        with sqlite3.connect(path) as raw:  # each export batch is one transaction: no half-written batch
            counted = dict(raw.execute("SELECT trace_id, count(*) FROM spans GROUP BY trace_id"))
            n_spans = dict(raw.execute("SELECT trace_id, n_spans FROM traces"))
        assert counted == n_spans
    finally:
        store.close()
