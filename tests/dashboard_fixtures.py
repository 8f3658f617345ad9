"""A small home for the dashboard tests: four runs of the real retriever on datasets/sample, with traces.

``base`` (graph mode, depth 100) and ``fast`` (fast mode) differ on many
queries, so Compare has regressions; ``top20`` is ``base`` scored to depth 20;
``nodense`` is a named, tagged run with RRF fusion and the dense stage skipped
(fusion weight 0), so its traces carry skipped stages and its relevance is rank-only.
Folder names carry the UTC stamps the dashboard dates runs by.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "datasets" / "sample"

RUNS: dict[str, tuple[str, dict[str, Any]]] = {
    "base": ("sample-graph-20250101T090000-base", {"mode": "graph"}),
    "fast": ("sample-fast-20250102T090000-fast", {"mode": "fast"}),
    "top20": ("sample-graph-20250103T090000-top20", {"mode": "graph", "depth": 20}),
    "nodense": ("sample-graph-20250104T090000-nodense", {"mode": "graph"}),
}
NODENSE_SEARCH = {"fusion": {"method": "rrf", "weights": {"dense": 0.0}}}
NODENSE_NAME, NODENSE_TAGS, NODENSE_NOTE = "no dense, rrf", ("ablation", "rrf"), "dense stage off"


@pytest.fixture(scope="session")
def run_ids() -> dict[str, str]:
    """Role (base, fast, top20, nodense) to run id."""
    return {role: name for role, (name, _) in RUNS.items()}


@pytest.fixture(scope="session")
def dashboard_home(tmp_path_factory, model, warm_cache) -> Path:
    """The home folder: ``runs/`` with the four runs, ``traces.sqlite`` with their 400 traces."""
    from searchtrace.evals import RunLabel
    from searchtrace.evals.runs.execution import run_eval
    from searchtrace.evals.runs.runfolder import EvalSettings
    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.traces import TraceSettings

    home = warm_cache(tmp_path_factory.mktemp("dashboard-home"))  # the model and vectors: nothing to embed
    for role, (name, options) in RUNS.items():
        nodense = role == "nodense"
        config = resolve_config(home=home, environ={}, search=NODENSE_SEARCH if nodense else None)
        run_eval(EvalSettings(dataset=str(SAMPLE), **options), config, out=home / "runs" / name, embedder=model,
                 progress=False, trace_settings=TraceSettings.resolve(environ={}),
                 label=RunLabel(NODENSE_NAME, NODENSE_TAGS, NODENSE_NOTE) if nodense else None)
    return home


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium over its DevTools protocol, one per test module."""
    from headless_chromium import Chromium

    with Chromium(timeout_s=60) as chromium:
        yield chromium


# --- a home of live traffic: a model load, command-line and served searches, failures -------------

GRAPH_QUERY = "What bird appears on the sigil of the fellowship Orsolya Venn entered?"
CLI_QUERY = "In which shipyard town was the vessel commanded by Meribel Osk constructed?"


@pytest.fixture(scope="session")
def live_home(tmp_path_factory, sample_config, sample_index_path, model) -> dict[str, Any]:
    """A home whose store holds what the real code records outside evals, in this order: the model's load (its
    own trace), the cold command-line search after it, a command-line search that fails validation, then over
    HTTP a graph search (with relation hits), a request refused as invalid, and a documents request. Its
    ``indexes/`` links the sample's index, whose manifest names datasets/sample. Returns the home and the trace
    id of each (keys: home, load, cold, failed, served, refused, docs)."""
    import httpx
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from serve_helpers import make_service, running

    from searchtrace.errors import ValidationError
    from searchtrace.home import Home
    from searchtrace.retriever.api import open_retriever
    from searchtrace.retriever.embedding.cache import Embedder
    from searchtrace.retriever.serve.http import create_app
    from searchtrace.traces import TraceSettings, make_tracer_provider
    from searchtrace.traces import vocabulary as v

    home = tmp_path_factory.mktemp("live-home")
    (home / "indexes").mkdir()
    (home / "indexes" / sample_index_path.name).symlink_to(sample_index_path, target_is_directory=True)
    provider, handles = make_tracer_provider(Home(home), TraceSettings(store=True, schedule_delay_ms=50))
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("test.live")

    def last(name: str) -> str:
        span = [s for s in memory.get_finished_spans() if s.name == name][-1]
        return format(span.context.trace_id, "032x")

    ids: dict[str, Any] = {"home": home}
    retriever = open_retriever(SAMPLE, sample_config, embedder=Embedder(sample_config.home), progress=False,
                               tracer=tracer, source=v.Source.CLI)  # a fresh embedder: its load is traced
    try:
        ids["load"] = last(v.EMBEDDER_LOAD_SPAN)
        ids["cold"] = retriever.search({"query": CLI_QUERY, "mode": "graph"}).trace_id
        with pytest.raises(ValidationError):
            retriever.search({"query": "   "})
        ids["failed"] = last(v.SEARCH_SPAN)
    finally:
        retriever.close()
    service = make_service([SAMPLE], sample_config, sample_index_path, model, tracer)
    service.open()
    try:
        with running(create_app(service)) as url, httpx.Client(base_url=url, timeout=30) as client:
            served = client.post("/v1/search", json={"query": GRAPH_QUERY, "mode": "graph", "top_k": 8})
            assert served.status_code == 200 and any(r["component_type"] == "relation"
                                                     for r in served.json()["results"])
            ids["served"] = served.headers["x-trace-id"]
            refused = client.post("/v1/search", json={"query": "x", "top_k": 0})
            assert refused.status_code == 400
            ids["refused"] = refused.headers["x-trace-id"]
            doc = next(r["id"] for r in served.json()["results"] if r["component_type"] == "chunk")
            ids["docs"] = client.get("/v1/docs", params={"ids": doc}).headers["x-trace-id"]
    finally:
        service.close()
    handles.shutdown()
    return ids


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    """Where browser tests put screenshots: ``$SEARCHTRACE_SCREENSHOTS`` when set, else a temporary folder."""
    folder = Path(os.environ.get("SEARCHTRACE_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def served(tmp_path) -> tuple[Path, Path]:
    """For the Implicit page: a copy of the sample and a home whose store holds 30 searches of three of its queries, the first query's
    first result fetched after each of its searches, and one fetch naming a trace the store lacks."""
    import json
    import shutil

    from trace_fixtures import MS, T0, Served, record_served

    from searchtrace.evals import JudgingSession
    from searchtrace.traces import TraceStore

    dataset = tmp_path / "sample"
    shutil.copytree(SAMPLE, dataset, ignore=shutil.ignore_patterns("qrels"))
    queries = [json.loads(line) for line in (SAMPLE / "queries.jsonl").read_text().splitlines()[:3]]
    docs = [json.loads(line)["_id"] for line in (SAMPLE / "corpus.jsonl").read_text().splitlines()[:10]]
    store = TraceStore(tmp_path / "home" / "traces.sqlite")
    for n in range(10):
        t = T0 + n * 1000 * MS
        spans, ids = record_served(*(Served(t + i * MS, shown=tuple(docs), query=q["text"], session=f"s{n}")
                                     for i, q in enumerate(queries)))
        store.write(spans)
        store.write(record_served(Served(t + 10 * MS, fetched=(docs[0],), follows=ids[0]))[0])
    store.write(record_served(Served(T0 + 99_000 * MS, fetched=(docs[1],), follows="e" * 32))[0])
    store.close()
    JudgingSession.open(dataset).record(queries[0]["_id"], docs[0], 2, "ana")
    return tmp_path / "home", dataset


@pytest.fixture(scope="session")
def mixed_home(dashboard_home, live_home, tmp_path_factory) -> Path:
    """The fixture home's four runs with the live home's trace store: a model load, a failed CLI search, a
    served search, a refused request and a documents request."""
    import shutil

    home = tmp_path_factory.mktemp("mixed-home")
    shutil.copytree(dashboard_home / "runs", home / "runs")
    shutil.copy(live_home["home"] / "traces.sqlite", home / "traces.sqlite")
    (home / "indexes").symlink_to(live_home["home"] / "indexes", target_is_directory=True)
    return home
