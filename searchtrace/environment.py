"""Every environment variable searchtrace reads, in one documented place.

As in ``opentelemetry.sdk.environment_variables``, each name is a constant with
its meaning; code reads variables only while resolving a configuration object,
never on the search path, through the typed readers of
:mod:`searchtrace.envvalues`. Flags win over variables, variables over defaults.
The OpenTelemetry SDK and its OTLP exporters also read the standard ``OTEL_*``
variables themselves (endpoint headers, timeouts, certificates, compression).
"""

from __future__ import annotations

__all__ = [
    "COLUMNS",
    "HF_HUB_OFFLINE",
    "NEO4J_DATABASE",
    "NEO4J_PASSWORD",
    "NEO4J_URI",
    "NEO4J_USER",
    "OMP_WAIT_POLICY",
    "OTEL_ATTRIBUTE_COUNT_LIMIT",
    "OTEL_BSP_MAX_QUEUE_SIZE",
    "OTEL_BSP_SCHEDULE_DELAY",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_SDK_DISABLED",
    "OTEL_SERVICE_NAME",
    "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT",
    "OTEL_TRACES_EXPORTER",
    "QDRANT_API_KEY",
    "QDRANT_REPLICATION_FACTOR",
    "QDRANT_SHARD_NUMBER",
    "QDRANT_URL",
    "SEARCHTRACE_API_KEY",
    "SEARCHTRACE_CAPTURE_CONTENT",
    "SEARCHTRACE_CAPTURE_QUERY",
    "SEARCHTRACE_CORS_ORIGINS",
    "SEARCHTRACE_DASHBOARD_URL",
    "SEARCHTRACE_EMBED_PRECISION",
    "SEARCHTRACE_HOME",
    "SEARCHTRACE_MAX_CANDIDATES",
    "SEARCHTRACE_OTLP",
    "SEARCHTRACE_OTLP_EXIT_TIMEOUT",
    "SEARCHTRACE_PROGRESS_SECONDS",
    "SEARCHTRACE_PROXYSQL_TOKEN",
    "SEARCHTRACE_RETRIEVER_CONFIG",
    "SEARCHTRACE_SERVE_MAX_INFLIGHT",
    "SEARCHTRACE_SERVE_TIMEOUT",
    "SEARCHTRACE_STORE",
    "SEARCHTRACE_STORE_BUFFER",
    "SEARCHTRACE_TRACE_ACK",
    "SEARCHTRACE_TRACE_STORE",
    "TOKENIZERS_PARALLELISM",
]

# --- searchtrace ------------------------------------------------------------

SEARCHTRACE_HOME = "SEARCHTRACE_HOME"
"""The home folder (indexes, embedding cache, runs, trace store); default ``~/.searchtrace``."""

SEARCHTRACE_RETRIEVER_CONFIG = "SEARCHTRACE_RETRIEVER_CONFIG"
"""A TOML file of search settings, used when ``--retriever-config`` is not given."""

SEARCHTRACE_EMBED_PRECISION = "SEARCHTRACE_EMBED_PRECISION"
"""The embedder's weights: ``fp32`` (default) or ``int8`` (dynamic quantization; its own index and cache entries)."""

SEARCHTRACE_STORE = "SEARCHTRACE_STORE"
"""A ``postgresql://`` URL of the store a team shares (traces, runs, judgments); unset: the home folder."""

SEARCHTRACE_STORE_BUFFER = "SEARCHTRACE_STORE_BUFFER"
"""Spans a process holds while the shared store is unreachable (default 100,000); more are dropped, counted."""

SEARCHTRACE_TRACE_STORE = "SEARCHTRACE_TRACE_STORE"
"""``0`` turns the local trace store off (spans then go only over OTLP, if configured)."""

SEARCHTRACE_OTLP = "SEARCHTRACE_OTLP"
"""``1`` / ``0`` turns OTLP export on or off; by default it is on when an OTLP endpoint is set."""

SEARCHTRACE_CAPTURE_QUERY = "SEARCHTRACE_CAPTURE_QUERY"
"""``0`` keeps the query text out of traces (``input.value``)."""

SEARCHTRACE_CAPTURE_CONTENT = "SEARCHTRACE_CAPTURE_CONTENT"
"""``1`` records document text on the stage spans."""

SEARCHTRACE_MAX_CANDIDATES = "SEARCHTRACE_MAX_CANDIDATES"
"""Most candidates recorded per stage span (default 100)."""

SEARCHTRACE_OTLP_EXIT_TIMEOUT = "SEARCHTRACE_OTLP_EXIT_TIMEOUT"
"""Seconds a command waits, as it exits, for an OTLP collector to take its last spans (default 1);
what is not sent by then is counted and reported, never waited for."""

SEARCHTRACE_PROGRESS_SECONDS = "SEARCHTRACE_PROGRESS_SECONDS"
"""Seconds between two progress lines of long work when stderr is not a terminal (default 10)."""

# --- serving (searchtrace serve) -------------------------------------------

SEARCHTRACE_API_KEY = "SEARCHTRACE_API_KEY"
"""The bearer token every HTTP and MCP-over-HTTP request must carry, to ``serve`` and to the
dashboard (its websocket too); required to bind a non-loopback address (unset on loopback = no
authentication)."""

SEARCHTRACE_PROXYSQL_TOKEN = "SEARCHTRACE_PROXYSQL_TOKEN"
"""The Bearer token ``serve --dialect proxysql`` requires at ``/mcp/rag`` (ProxySQL's tools; required to mount
them). The server's own API key does not apply there."""

SEARCHTRACE_SERVE_TIMEOUT = "SEARCHTRACE_SERVE_TIMEOUT"
"""Seconds a served search may take before it answers 504 TIMEOUT (default 2)."""

SEARCHTRACE_SERVE_MAX_INFLIGHT = "SEARCHTRACE_SERVE_MAX_INFLIGHT"
"""Searches a server runs at once; one more answers 429 OVERLOADED (default 32)."""

SEARCHTRACE_TRACE_ACK = "SEARCHTRACE_TRACE_ACK"
"""``0`` lets a server answer before the request's trace is written to the local store (default ``1``:
a response returned means its trace is stored, so a killed server loses none it answered)."""

SEARCHTRACE_CORS_ORIGINS = "SEARCHTRACE_CORS_ORIGINS"
"""Comma-separated origins allowed to call the HTTP API from a browser (default: none, no CORS)."""

SEARCHTRACE_DASHBOARD_URL = "SEARCHTRACE_DASHBOARD_URL"
"""The dashboard's base URL; served responses then carry ``traceUrl`` opening their trace there."""

# --- backends ---------------------------------------------------------------

QDRANT_URL = "QDRANT_URL"
"""A Qdrant server or cluster; unset = the embedded Qdrant Edge shard."""

QDRANT_API_KEY = "QDRANT_API_KEY"
"""The Qdrant server's API key."""

QDRANT_SHARD_NUMBER = "QDRANT_SHARD_NUMBER"
"""Shards of a collection built on a cluster (default: the server's)."""

QDRANT_REPLICATION_FACTOR = "QDRANT_REPLICATION_FACTOR"
"""Replicas of a collection built on a cluster (default: the server's)."""

NEO4J_URI = "NEO4J_URI"
"""A Neo4j (Bolt) server for the knowledge graph; unset = the in-process graph."""

NEO4J_USER = "NEO4J_USER"
"""Neo4j user (default ``neo4j``)."""

NEO4J_PASSWORD = "NEO4J_PASSWORD"
"""Neo4j password."""

NEO4J_DATABASE = "NEO4J_DATABASE"
"""Neo4j database (default: the server's)."""

# --- OpenTelemetry (standard names, read by searchtrace too) ------------------

OTEL_SDK_DISABLED = "OTEL_SDK_DISABLED"
"""``true`` turns every exporter off."""

OTEL_TRACES_EXPORTER = "OTEL_TRACES_EXPORTER"
"""When set, OTLP export is on exactly when it lists ``otlp``."""

OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
"""The collector's traces endpoint (wins over ``OTEL_EXPORTER_OTLP_ENDPOINT``)."""

OTEL_EXPORTER_OTLP_ENDPOINT = "OTEL_EXPORTER_OTLP_ENDPOINT"
"""The collector's endpoint; setting it turns OTLP export on."""

OTEL_EXPORTER_OTLP_TRACES_PROTOCOL = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
"""``http/protobuf`` (default) or ``grpc`` for traces (wins over ``OTEL_EXPORTER_OTLP_PROTOCOL``)."""

OTEL_EXPORTER_OTLP_PROTOCOL = "OTEL_EXPORTER_OTLP_PROTOCOL"
"""``http/protobuf`` (default) or ``grpc``."""

OTEL_SERVICE_NAME = "OTEL_SERVICE_NAME"
"""The ``service.name`` resource attribute (default ``searchtrace``)."""

OTEL_BSP_SCHEDULE_DELAY = "OTEL_BSP_SCHEDULE_DELAY"
"""Milliseconds finished spans wait before a batch export to the store (default 1000)."""

OTEL_BSP_MAX_QUEUE_SIZE = "OTEL_BSP_MAX_QUEUE_SIZE"
"""Finished spans a batch processor holds before dropping (default 16,384)."""

OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT = "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT"
"""The SDK's attribute cap per span; when unset searchtrace sizes it to the candidates recorded."""

OTEL_ATTRIBUTE_COUNT_LIMIT = "OTEL_ATTRIBUTE_COUNT_LIMIT"
"""As ``OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT``, for every kind of attribute."""

# --- the terminal -------------------------------------------------------------

COLUMNS = "COLUMNS"
"""The width human output is laid out for, as shells set it (default: the terminal's width, or 80
when output goes to a pipe or a file); ``--json`` and ``--format tsv`` output is never cut to it."""

# --- libraries --------------------------------------------------------------

HF_HUB_OFFLINE = "HF_HUB_OFFLINE"
"""Set to ``1`` before sentence-transformers loads (the reference embedder of the tests): nothing
is ever downloaded. The default ONNX embedder reads only the bundled files."""

OMP_WAIT_POLICY = "OMP_WAIT_POLICY"
"""Set to ``PASSIVE`` by ``searchtrace serve`` before torch loads (unless set): the model's OpenMP
threads otherwise spin after every call, on cores the concurrent searches need (measured: a
served search 8x slower with the embedding in the batcher's thread; BENCHMARKS.md)."""

TOKENIZERS_PARALLELISM = "TOKENIZERS_PARALLELISM"
"""Set to ``false`` by the command line: the tokenizer's threads would fight the searches'."""
