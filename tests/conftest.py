"""Fixtures shared across the test suite, and the line between unit and system tests.

Tests mirror the packages (``tests/retriever``, ``tests/traces``, ``tests/evals``,
``tests/dashboard``, ``tests/floor``, ``tests/cli``); ``tests/system`` holds what serves
searchtrace on a port (the HTTP API and MCP tools, uvicorn on loopback) or starts a browser, a
server process, PostgreSQL or the Bolt server, or builds the wheel, and the check of the ONNX
embedder against sentence-transformers (it loads torch, 2 GB, a second runtime). A test elsewhere
that needs one of those (a contract suite run on every backend, PostgreSQL among them) is marked
``system`` too, by :func:`pytest_collection_modifyitems`, so ``-m "not system"`` is the unit stage
``.ci/run`` runs first, and ``-m system`` the rest.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# CI runs the property tests with a fixed seed, so a red run is reproducible; locally they explore.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def model(sample_config):
    """The loaded all-MiniLM-L6-v2 ``Embedder`` (ONNX Runtime), once per session; its graph is
    built into the session's temporary home (a few seconds)."""
    from searchtrace.retriever.embedding.cache import Embedder

    embedder = Embedder(sample_config.home)
    embedder.load()
    return embedder


# --- unit or system --------------------------------------------------------

#: Fixtures that start a server of another program (PostgreSQL, a Bolt server, Chromium, Streamlit).
SYSTEM_FIXTURES = frozenset({"postgres", "pg_url", "pg_db", "stoppable_postgres", "bolt_server", "browser"})
#: Parameter values that select such a server inside a contract suite run on every backend.
SYSTEM_PARAMS = frozenset({"postgres", "bolt"})
SYSTEM_FOLDER = Path(__file__).resolve().parent / "system"


def is_system(item: pytest.Item) -> bool:
    """Whether a collected test needs a server of another program (or lives in ``tests/system``)."""
    if SYSTEM_FOLDER in Path(item.path).parents or item.get_closest_marker("bolt"):
        return True
    if SYSTEM_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    callspec = getattr(item, "callspec", None)
    return callspec is not None and any(isinstance(v, str) and v in SYSTEM_PARAMS for v in callspec.params.values())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if is_system(item):
            item.add_marker(pytest.mark.system)


# --- the sample dataset, indexed once per session -------------------------

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "datasets" / "sample"
SHARED_DATASETS = REPO.parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def sample_dataset():
    from searchtrace.retriever.data.beir import load_dataset

    return load_dataset(SAMPLE)


@pytest.fixture(scope="session")
def sample_config(tmp_path_factory, worker_id):
    """A retriever config whose home is a fresh temporary folder (no server settings). Under pytest-xdist
    the home starts as a copy of one the workers share (:func:`_seeded`): the model's graph and the sample's
    index are built once, not once per worker."""
    from searchtrace.retriever.config.resolve import resolve_config

    home = tmp_path_factory.mktemp("home")
    if worker_id != "master":
        _seeded(tmp_path_factory.getbasetemp().parent / "seed-home", home)
    return resolve_config(home=home, environ={})


def _seeded(seed: Path, home: Path) -> None:
    """Copy into ``home`` the cache and indexes of ``seed``, a home the first worker to get here builds
    (the model's graph, the sample's vectors and index) while the others wait on a lock: one build
    with both cores takes 8.5 s, two at once 14 s each. Copied, never linked: a test may damage its copy."""
    import fcntl
    import shutil

    seed.mkdir(exist_ok=True)
    with (seed.parent / "seed-home.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (seed / "built").exists():
            from searchtrace.retriever.config.resolve import resolve_config
            from searchtrace.retriever.data.beir import load_dataset
            from searchtrace.retriever.embedding.cache import Embedder
            from searchtrace.retriever.index import build_index

            config = resolve_config(home=seed / "home", environ={})
            embedder = Embedder(config.home)
            embedder.load()
            build_index(load_dataset(SAMPLE), config, embedder, progress=False)
            (seed / "built").touch()
    for part in ("cache", "indexes"):
        shutil.copytree(seed / "home" / part, home / part, symlinks=True)


@pytest.fixture(scope="session")
def sample_index_path(model, sample_dataset, sample_config):
    from searchtrace.retriever.index import build_index

    return build_index(sample_dataset, sample_config, model, progress=False)


@pytest.fixture(scope="session")
def warm_cache(sample_config, sample_index_path):
    """Seeds a new home folder's cache with the session home's (the model's graph and the sample's vectors,
    copied, never linked: a test may damage its copy), so building the sample's index there embeds nothing.
    Called with the new home's root; returns it."""
    import shutil

    def seed(home: Path) -> Path:
        shutil.copytree(sample_config.home.cache, home / "cache")
        return home

    return seed


@pytest.fixture
def traced(sample_index_path, sample_config, model):
    """A factory of Retrievers on the sample index, each with an in-memory span exporter."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from searchtrace.retriever.index import open_index
    from searchtrace.retriever.search.pipeline import Retriever

    opened = []

    def make(**kwargs):
        from opentelemetry.sdk.trace import SpanLimits

        from searchtrace.traces.export.provider import attribute_limit
        from searchtrace.traces.spans.attributes import CaptureConfig

        exporter = InMemorySpanExporter()
        limit = attribute_limit(kwargs.get("capture") or CaptureConfig())
        provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=limit))
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        index = kwargs.pop("index", None) or open_index(sample_index_path, sample_config)
        opened.append(index)
        config = kwargs.pop("config", sample_config)
        return Retriever(index, model, config, tracer=provider.get_tracer("test"), **kwargs), exporter

    yield make
    for index in opened:
        index.close()


@pytest.fixture(scope="session")
def unlabelled_home(tmp_path_factory, sample_config, warm_cache, model):
    """A home with a query set drawn from emulated traffic on the sample (40 of its queries, asked 1 to 4 times
    each; ``--sample all``) and two runs of it without labels, graph mode (the default) and fast mode, their
    traces in the home's store. Returns (home, {"graph": run folder, "fast": run folder}, the query set)."""
    from trace_fixtures import MS, T0, FakeSearch, record

    from searchtrace.cli import main
    from searchtrace.evals import EvalSettings, run_eval
    from searchtrace.home import Home
    from searchtrace.retriever import load_dataset
    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.traces import TraceSettings, TraceStore

    home = warm_cache(tmp_path_factory.mktemp("unlabelled-home"))
    asked = load_dataset(SAMPLE).queries[:40]
    spans, _ = record(*(FakeSearch(query=q.text, source="http", dataset="sample",
                                   start_ns=T0 + (100 * i + k) * 1000 * MS)
                        for i, q in enumerate(asked) for k in range(1 + i % 4)))
    store = TraceStore(Home(home).traces)
    store.write(spans)
    store.close()
    queries = home / "traffic-q"
    assert main(["queries", "from-traces", str(queries), "--dataset", str(SAMPLE), "--home", str(home),
                 "--no-progress", "--sample", "all"]) == 0
    config = resolve_config(home=home, environ={})
    runs = {mode: run_eval(EvalSettings(dataset=str(queries), mode=mode), config, embedder=model, progress=False,
                           out=home / "runs" / f"traffic-q-{mode}-2025010{i + 1}T090000-{mode}",
                           trace_settings=TraceSettings.resolve(environ={})).path
            for i, mode in enumerate(("graph", "fast"))}
    return home, runs, queries


# --- PostgreSQL: a real server, one per session, a database per test -------

@pytest.fixture(scope="session")
def postgres():
    """The session's PostgreSQL server (tests/postgres_server.py); skips with the reason when there is none."""
    from postgres_server import PostgresServer, skip_reason

    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    server = PostgresServer().setup()
    yield server
    server.teardown()


@pytest.fixture
def pg_url(postgres):
    """A fresh, empty database on the session's server: its ``postgresql://`` URL (with a password)."""
    url = postgres.new_database()
    yield url
    from searchtrace.database.pool import _open

    for key in [k for k in _open if k == url]:
        _open.pop(key).close()
    postgres.drop_database(url)


@pytest.fixture
def pg_db(pg_url):
    """A :class:`~searchtrace.database.Database` on a fresh database, migrated to this client's schema."""
    from searchtrace.cli import migrations
    from searchtrace.database import Database, StoreUrl, migrate

    db = Database(StoreUrl(pg_url))
    migrate(db, migrations())
    yield db
    db.close()


@pytest.fixture(scope="module")
def stoppable_postgres():
    """A PostgreSQL server of the module's own, which its tests may stop and start (never the shared one)."""
    from postgres_server import TEST_POSTGRES, PostgresServer, skip_reason

    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    if os.environ.get(TEST_POSTGRES):
        pytest.skip(f"stops and starts its server: needs Debian's postgresql, not {TEST_POSTGRES}")
    server = PostgresServer().setup()
    yield server
    server.teardown()
