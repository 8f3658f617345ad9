"""A foreign retriever's spans joined to the eval's: LangChain's BM25Retriever behind a small HTTP app
(``tests/langchain_app.py``, a child), instrumented with OpenInference and exporting with the standard OTLP/HTTP
exporter to a ``searchtrace collect`` child, evaluated on the sample with a target file. The eval writes its
own spans to the collector's home, so each query's trace holds the eval's ``search`` span and, under it, the
app's server span and LangChain's retriever span, read back from the one store."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from collect_process import Collector

from searchtrace.cli import main
from searchtrace.traces import TraceFilter
from searchtrace.traces.store.opening import open_trace_store

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "datasets" / "sample"
APP = ROOT / "tests" / "langchain_app.py"
STARTUP_S = 60


class LangChainApp:
    """``tests/langchain_app.py`` as a child on the sample's corpus, exporting to ``endpoint``."""

    def __init__(self, folder: Path, endpoint: str) -> None:
        port_file, self.log = folder / "app.port", folder / "app.log"
        env = {**os.environ, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": endpoint}
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen([sys.executable, str(APP), str(SAMPLE / "corpus.jsonl"), str(port_file)],
                                         env=env, stdout=out, stderr=out)
        deadline = time.monotonic() + STARTUP_S
        while not port_file.exists() or not port_file.read_text():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the LangChain app did not start ({self.proc.poll()}): {self.log.read_text()}")
            time.sleep(0.1)
        self.url = f"http://127.0.0.1:{port_file.read_text()}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(30)


TARGET_FILE = """\
description = "LangChain BM25Retriever behind POST /search"

[target]
transport = "http"
method = "POST"
url = "{url}"
path = "/search"
timeout_s = 10

[request]
query = "query"
depth = "k"

[answer]
results = "hits"
id = "doc_id"
text = "text"
"""


@pytest.fixture
def services(tmp_path):
    collector = Collector(tmp_path / "home")
    app = None
    try:
        app = LangChainApp(tmp_path, collector.url)
        yield collector, app
    finally:
        if app is not None:
            app.stop()
        if collector.proc.poll() is None:
            collector.proc.kill()
            collector.proc.wait()


def test_each_query_s_trace_holds_the_eval_s_span_and_the_retriever_s_under_it(tmp_path, services):
    collector, app = services
    target = tmp_path / "langchain.toml"
    target.write_text(TARGET_FILE.replace("{url}", app.url))
    out = tmp_path / "run"
    code = main(["eval", str(SAMPLE), "--target-file", str(target), "--depth", "10", "--out", str(out),
                 "--home", str(collector.home), "--no-progress"])
    assert code in (0, 1), code  # 1: BM25's quality against the gate is not the point here
    run = json.loads((out / "run.json").read_text())
    assert run["errors"] == 0
    queries = {line.split()[0] for line in (out / "run.trec").read_text().splitlines()}
    assert len(queries) >= 20
    app.stop()
    assert collector.stop() == 0  # drained: every span acknowledged is in the store

    store = open_trace_store(collector.home / "traces.sqlite")
    try:
        traces = [store.load_trace(t.trace_id) for t in store.list_traces(TraceFilter(limit=None))]
    finally:
        store.close()
    joined = 0
    for trace in traces:
        assert trace is not None
        by_id = {s.span_id: s for s in trace.spans}
        searches = [s for s in trace.spans if s.name == "search"]
        if not searches:
            continue
        (search,) = searches
        (server,) = [s for s in trace.spans if s.name == "POST /search"]
        assert server.parent_id == search.span_id and server.kind == "SERVER"
        retrievers = [s for s in trace.spans if s.attributes.get("openinference.span.kind") == "RETRIEVER"]
        assert len(retrievers) == 1, [s.name for s in trace.spans]
        (retriever,) = retrievers
        assert retriever.name == "BM25Retriever" and by_id[retriever.parent_id or ""] is server
        shown = [retriever.attributes.get(f"retrieval.documents.{i}.document.metadata") for i in range(3)]
        assert all(m and json.loads(m)["doc_id"] for m in shown)
        assert search.start_ns <= server.start_ns <= retriever.start_ns
        assert retriever.end_ns <= server.end_ns <= search.end_ns
        joined += 1
    assert joined == len(queries), (joined, len(queries))
