"""Opt-in: spans of an emulated search reach a real Arize Phoenix over OTLP/HTTP with their documents.

Phoenix runs as a subprocess on free loopback ports, with its own working folder.
It is found through ``$SEARCHTRACE_PHOENIX`` (the ``phoenix`` executable of a
separate virtualenv, as CI installs it), else ``phoenix`` on PATH, else the
``phoenix`` package in this interpreter; without one the test skips.

    python -m venv /opt/phoenix && /opt/phoenix/bin/pip install arize-phoenix
    SEARCHTRACE_PHOENIX=/opt/phoenix/bin/phoenix pytest -m phoenix
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from trace_fixtures import FakeSearch, emulate_search

from searchtrace.home import Home
from searchtrace.traces import vocabulary as v
from searchtrace.traces.export.provider import TraceSettings, make_tracer_provider

pytestmark = pytest.mark.phoenix
STARTUP_S = 120


def _phoenix_command() -> list[str] | None:
    explicit = os.environ.get("SEARCHTRACE_PHOENIX")
    if explicit:
        return [explicit, "serve"]
    on_path = shutil.which("phoenix")
    if on_path:
        return [on_path, "serve"]
    if importlib.util.find_spec("phoenix") is not None:
        return [sys.executable, "-m", "phoenix.server.main", "serve"]
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    command = _phoenix_command()
    if command is None:
        pytest.skip("Phoenix is not installed: set SEARCHTRACE_PHOENIX to the `phoenix` executable of a venv "
                    "with `pip install arize-phoenix` (its botocore pins python-dateutil<3: keep it out of the "
                    "project venv)")
    work = tmp_path_factory.mktemp("phoenix")
    port = _free_port()
    env = {**os.environ, "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(_free_port()),
           "PHOENIX_WORKING_DIR": str(work), "PHOENIX_TELEMETRY_ENABLED": "false", "DO_NOT_TRACK": "1"}
    log = open(work / "phoenix.log", "wb")
    proc = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(base, proc, work / "phoenix.log")
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _wait_healthy(base: str, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"Phoenix exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"Phoenix did not answer on {base}/healthz within {STARTUP_S} s")


def _spans_of(base: str, trace_id: str, expected: int) -> list[dict]:
    deadline = time.monotonic() + 30  # Phoenix ingests asynchronously
    while True:
        spans = _get(f"{base}/v1/projects/default/spans?trace_id={trace_id}&limit=100")["data"]
        if len(spans) >= expected or time.monotonic() > deadline:
            return spans
        time.sleep(0.3)


def _document_ids(attributes: dict) -> list[str]:
    flat = {k: x for k, x in attributes.items() if k.startswith(f"{v.RETRIEVAL_DOCUMENTS}.")}
    if flat:  # the REST API returns OpenInference keys flattened
        n = len({k.split(".")[2] for k in flat})
        return [flat[f"{v.RETRIEVAL_DOCUMENTS}.{i}.{v.DOCUMENT_ID}"] for i in range(n)]
    return [d["document"]["id"] for d in attributes["retrieval"]["documents"]]


def test_retriever_spans_arrive_with_their_documents(phoenix, tmp_path, monkeypatch):
    for name in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_TRACES_EXPORTER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", phoenix)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    provider, handles = make_tracer_provider(Home(tmp_path), TraceSettings.resolve(store=False))
    search = FakeSearch(candidates=20, start_ns=time.time_ns())
    trace_id = emulate_search(provider.get_tracer("searchtrace"), search)
    handles.shutdown()
    assert handles.exporters[0].stats().exported_spans == 11

    spans = {s["name"]: s for s in _spans_of(phoenix, trace_id, 11)}
    assert len(spans) == 11, sorted(spans)
    assert spans["search"]["span_kind"] == "CHAIN" and spans["search"]["parent_id"] is None
    root_id = spans["search"]["context"]["span_id"]
    for stage in ("dense", "keyword", "graph"):
        assert spans[stage]["span_kind"] == "RETRIEVER" and spans[stage]["parent_id"] == root_id
        assert _document_ids(spans[stage]["attributes"]) == ["d1", "d2", "d3", *(f"{stage}-{i}" for i in range(17))]
    assert spans["rerank"]["span_kind"] == "RERANKER"

    query = ("query ($t: ID!) { projects { edges { node { trace(traceId: $t) { spans(first: 50) { edges { node "
             "{ name numDocuments } } } } } } } }")
    reply = _get(f"{phoenix}/graphql", {"query": query, "variables": {"t": trace_id}})
    counts = {e["node"]["name"]: e["node"]["numDocuments"]
              for p in reply["data"]["projects"]["edges"] if p["node"]["trace"]
              for e in p["node"]["trace"]["spans"]["edges"]}
    assert {k: counts[k] for k in ("dense", "keyword", "graph", "search")} == {
        "dense": 20, "keyword": 20, "graph": 20, "search": 0}  # Phoenix read them as retrieval documents
