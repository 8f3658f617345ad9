"""The span vocabulary: every span name and attribute key, defined once.

OpenInference keys are reused where one exists so standard viewers (Phoenix,
Arize, any OpenInference-aware backend) read our spans; what no standard
covers lives under the ``searchtrace.`` prefix.
"""

from __future__ import annotations

import enum

from searchtrace.names import Stage

SEARCH_SPAN = "search"
"""Name of a search's root span; each stage's span, its child, is named by the
stage's value (:class:`searchtrace.names.Stage`: ``validate``, ``rewrite``, ...)."""


class SpanKind(str, enum.Enum):
    """Values of ``openinference.span.kind``."""

    CHAIN = "CHAIN"
    EMBEDDING = "EMBEDDING"
    RETRIEVER = "RETRIEVER"
    RERANKER = "RERANKER"


SPAN_KINDS: dict[str, SpanKind] = {
    SEARCH_SPAN: SpanKind.CHAIN,
    Stage.EMBED.value: SpanKind.EMBEDDING,
    Stage.DENSE.value: SpanKind.RETRIEVER,
    Stage.KEYWORD.value: SpanKind.RETRIEVER,
    Stage.GRAPH.value: SpanKind.RETRIEVER,
    Stage.FEEDBACK.value: SpanKind.RETRIEVER,
    Stage.RERANK.value: SpanKind.RERANKER,
}
"""OpenInference span kind of each span that has one, by span name."""

EMBEDDER_LOAD_SPAN = "embedder.load"
"""Name of the span, a trace of its own, that loads the embedding model before any search runs
(the ONNX graph built or read from the home, the session and the tokenizer opened), so no
search's ``embed`` span holds the load."""

SPAN_NAMES: tuple[str, ...] = (SEARCH_SPAN, *(s.value for s in Stage))
"""Every span name a search records: the root, then its stages in order."""

# --- OpenInference keys -----------------------------------------------------

OPENINFERENCE_SPAN_KIND = "openinference.span.kind"
"""OpenInference span kind (CHAIN, EMBEDDING, RETRIEVER, RERANKER)."""

INPUT_VALUE = "input.value"
"""The query text (only when query capture is on)."""

OUTPUT_VALUE = "output.value"
"""A short JSON summary of the response on the root span."""

RETRIEVAL_DOCUMENTS = "retrieval.documents"
"""Prefix of ``retrieval.documents.{i}.document.{id,score,content}``."""

DOCUMENT_ID = "document.id"
"""Suffix: a candidate's document id."""

DOCUMENT_SCORE = "document.score"
"""Suffix: a candidate's raw stage score."""

DOCUMENT_CONTENT = "document.content"
"""Suffix: a candidate's text (only when content capture is on)."""

RERANKER_INPUT_DOCUMENTS = "reranker.input_documents"
"""Prefix of the reranker's input documents."""

RERANKER_OUTPUT_DOCUMENTS = "reranker.output_documents"
"""Prefix of the reranker's output documents."""

RERANKER_TOP_K = "reranker.top_k"
"""How many documents the reranker keeps."""

RERANKER_MODEL_NAME = "reranker.model_name"
"""The reranker in use (``identity`` by default)."""

EMBEDDING_MODEL_NAME = "embedding.model_name"
"""The embedding model."""

EMBEDDER_BUILT = "searchtrace.embedder.built"
"""On the load span: True when the ONNX graph was built from the weights (first use in this home)."""

EMBEDDER_IDENTITY = "searchtrace.embedder.identity"
"""On the load span: the embedder's weights hash, runtime and precision (its embedding cache key)."""

EMBED_PRECOMPUTED = "searchtrace.embed.precomputed"
"""True when the caller passed the query vector (batch-embedded by the eval runner)."""

SEARCH_COLD = "searchtrace.search.cold"
"""On the search span: True for the first search a process runs after it loaded the embedding model
(an ``embedder.load`` trace just before it), whose first model call, caches and pages are cold;
False for every later one."""

# --- searchtrace keys -------------------------------------------------------

MODE = "searchtrace.mode"
"""Search mode: fast or graph."""

TOP_K = "searchtrace.top_k"
"""Results asked for."""

CANDIDATES = "searchtrace.candidates"
"""Per-stage candidate depth asked for."""

DEPTH = "searchtrace.graph.depth"
"""Graph traversal depth used (0 in fast mode)."""

CANDIDATE_COUNT = "searchtrace.candidate_count"
"""Number of candidates the stage produced (before the recording cap)."""

CANDIDATE_IDS = "searchtrace.candidate.ids"
"""All recorded candidate ids of the stage, best first (string array)."""

CANDIDATE_SCORES = "searchtrace.candidate.scores"
"""Raw scores parallel to ``searchtrace.candidate.ids`` (float array)."""

CANDIDATE_CONTENTS = "searchtrace.candidate.contents"
"""Texts parallel to ``searchtrace.candidate.ids`` (only when content capture is on)."""

RERANK_INPUT_IDS = "searchtrace.rerank.input.ids"
"""Ids the reranker received, in order (expanded to ``reranker.input_documents.*`` on export)."""

RERANK_INPUT_SCORES = "searchtrace.rerank.input.scores"
"""Scores parallel to ``searchtrace.rerank.input.ids``."""

RERANK_OUTPUT_IDS = "searchtrace.rerank.output.ids"
"""Ids the reranker returned, in order (expanded to ``reranker.output_documents.*`` on export)."""

RERANK_OUTPUT_SCORES = "searchtrace.rerank.output.scores"
"""Scores parallel to ``searchtrace.rerank.output.ids``."""

RESULT_IDS = "searchtrace.result.ids"
"""Ids of the returned results, in order."""

RESULT_BANDS = "searchtrace.result.bands"
"""Confidence band of each returned result."""

RESULT_RELEVANCE = "searchtrace.result.relevance"
"""Relevance (0-1) of each returned result."""

RESULT_TITLES = "searchtrace.result.titles"
"""Title of each returned result, parallel to ``searchtrace.result.ids`` ("" for a relation hit and an
untitled passage): the search has them at hand, so a trace of any source reads with its titles."""

RELATION_IDS = "searchtrace.relation.ids"
"""Ids of the relation hits among the returned results (``rel:`` and a hash of the triple), in order."""

RELATION_SUBJECTS = "searchtrace.relation.subjects"
"""Subject of each relation hit, parallel to ``searchtrace.relation.ids``."""

RELATION_PREDICATES = "searchtrace.relation.predicates"
"""Relation (predicate) of each relation hit, parallel to ``searchtrace.relation.ids``."""

RELATION_OBJECTS = "searchtrace.relation.objects"
"""Object of each relation hit, parallel to ``searchtrace.relation.ids``."""

BEST_SCORE = "searchtrace.best_score"
"""Best relevance before any filter."""

NO_CONFIDENT_RESULTS = "searchtrace.no_confident_results"
"""True when no result reaches the low threshold."""

RETRY_DETECTED_ENTITIES = "searchtrace.retry.detected_entities"
"""Retry hint: entities detected in the query."""

RETRY_RELATED_TERMS = "searchtrace.retry.related_terms"
"""Retry hint: graph neighbours of the detected entities."""

RETRY_NARROWER = "searchtrace.retry.narrower_query"
"""Retry hint: a narrower query."""

RETRY_BROADER = "searchtrace.retry.broader_query"
"""Retry hint: a broader query."""

DETECTED_ENTITIES = "searchtrace.rewrite.entities"
"""Entities the rewrite stage detected (display names)."""

REWRITE_TERMS = "searchtrace.rewrite.terms"
"""Terms the rewrite stage added to the keyword query."""

DEGRADED = "searchtrace.degraded"
"""Stages that failed and were skipped."""

FUSION_METHOD = "searchtrace.fusion.method"
"""dbsf, rrf, zscore, weighted or keyword_then_dense."""

FUSION_K0 = "searchtrace.fusion.k0"
"""RRF rank constant."""

FUSION_WEIGHTS = "searchtrace.fusion.weights"
"""Per-stage weights as ``stage=weight`` strings."""

RELEVANCE_MODEL = "searchtrace.relevance.model"
"""Relevance model: similarity, rank, logistic or isotonic."""

FILTER_DROPPED_IDS = "searchtrace.filter.dropped_ids"
"""Candidates the filter stage removed."""

FILTER_APPLIED = "searchtrace.filter.applied"
"""Names of the filters in force."""

GRAPH_HITS = "searchtrace.graph.triples"
"""Triples the graph stage reached."""

GRAPH_METHOD = "searchtrace.graph.method"
"""How the graph stage scored documents: ppr or expand."""

GRAPH_SEED_DOCS = "searchtrace.graph.seed_docs"
"""First-pass passages whose entities seeded the walk beside the query's (``graph.seed_docs``)."""

SKIPPED = "searchtrace.stage.skipped"
"""Why a stage did not run although its span exists (e.g. ``fusion weight 0``)."""

DENSE_PARTS_WEIGHT = "searchtrace.dense.parts_weight"
"""Weight of the best part's cosine in the dense score (0: the passage vector alone)."""

FEEDBACK_IDS = "searchtrace.feedback.ids"
"""Documents whose mean vector the pseudo-relevance feedback added to the query."""

FEEDBACK_WEIGHT = "searchtrace.feedback.weight"
"""Rocchio weight of the feedback documents' mean vector."""

RUN_ID = "searchtrace.run_id"
"""Eval run id, when the eval runner drives the search."""

QUERY_ID = "searchtrace.query_id"
"""Query id within the eval run."""

ERROR_CODE = "searchtrace.error.code"
"""Error code when the search failed (VALIDATION_ERROR, ...)."""

TARGET = "searchtrace.target"
"""The eval target a search was sent to (``eval --target``: a URL or ``module:function``)."""

TARGET_TRACE_ID = "searchtrace.target.trace_id"
"""The ``traceId`` the eval target's response carried (its own trace of the search)."""

TARGET_RETRY_EVENT = "searchtrace.target.retry"
"""A span event on an eval target's search span: the target answered a retryable error (overloaded, a
timeout, unreachable) and is asked again after a wait."""

TARGET_RETRY_ATTEMPT = "searchtrace.target.retry.attempt"
"""On a retry event: which retry this is (1 for the first)."""

TARGET_RETRY_DELAY_S = "searchtrace.target.retry.delay_s"
"""On a retry event: the seconds waited before it (the server's ``Retry-After`` when it named one)."""

SOURCE = "searchtrace.source"
"""Who called: a :class:`Source` value (http, mcp, cli, eval, python); on the search span and the server span."""

DATASET = "searchtrace.dataset"
"""The dataset a search searched: its folder name (the index's ``dataset``), on the search span; and the
dataset a served fetch (``get_docs``, ``/v1/docs``) read, on its server span. The trace store keeps it in a
column, by which ``searchtrace queries from-traces --dataset`` and ``judge implicit`` pick traces."""

FETCH_IDS = "searchtrace.fetch.ids"
"""On a served fetch's server span (``get_docs``/``get_chunks``, ``/v1/docs``/``/v1/chunks``): the ids it
fetched, in the order asked; recorded when the fetch answered. ``judge implicit`` reads each as a click on
that document where the search the fetch follows showed it."""

FETCH_OF = "searchtrace.fetch.of"
"""On a served fetch's server span: the trace id (32 lowercase hex) of the search whose results the fetch
follows, as the caller named it (the request's ``traceId``)."""


INDEX_KEY = "searchtrace.index.key"
"""The content-addressed key of the index a search searched, on the search span: with
``searchtrace.dataset`` it names the index folder (``<home>/indexes/<dataset>-<key>``), whose manifest
names the dataset folder, where a trace's candidates' titles are read for display."""


class Source(str, enum.Enum):
    """Values of ``searchtrace.source``: the surface a search came through."""

    HTTP = "http"
    MCP = "mcp"
    CLI = "cli"
    EVAL = "eval"
    PYTHON = "python"
    OTLP = "otlp"
    """Not ours: a trace another program sent (another retriever's spans, received over OTLP)."""


class TraceKind(str, enum.Enum):
    """What a trace is, by its spans: the trace store's ``kind`` column (stored values: never renamed)."""

    SEARCH = "search"
    """A search: its ``search`` span was stored (under a server span when served)."""
    MODEL_LOAD = "load"
    """The embedding model loaded (root :data:`EMBEDDER_LOAD_SPAN`): a cost of the process, not of a search."""
    OTHER = "other"
    """Anything else: a served request that ran no search (a refused one, stats, documents)."""


# --- server spans (searchtrace serve) -------------------------------------------

HTTP_REQUEST_METHOD = "http.request.method"
"""OpenTelemetry semantic convention: the HTTP method of a served request."""

HTTP_ROUTE = "http.route"
"""OpenTelemetry semantic convention: the matched route (``/v1/search``)."""

HTTP_RESPONSE_STATUS_CODE = "http.response.status_code"
"""OpenTelemetry semantic convention: the status code answered."""

MCP_METHOD_NAME = "mcp.method.name"
"""MCP semantic convention: the JSON-RPC method (``tools/call``)."""

GEN_AI_TOOL_NAME = "gen_ai.tool.name"
"""GenAI semantic convention: the MCP tool called."""

DIALECT = "searchtrace.dialect"
"""The other system's surface a served call came through (``serve --dialect NAME``: ``concept-rag``); on the
server span of a dialect's tool call, whose source stays the transport (mcp)."""

MCP_SESSION_ID = "mcp.session.id"
"""MCP semantic convention: the session a tool call belongs to. Over streamable HTTP, the ``Mcp-Session-Id``
a handshake-era client (protocol 2025-11-25 and before) sends back, which the server mints when a POST has
none (``retriever.serve.sessions``); over stdio, one id per server process (its one client's pipe). A client
of protocol 2026-07-28, which has no sessions, has none: it names the search it follows by ``traceId``."""

TIMED_OUT = "searchtrace.timed_out"
"""True on a server span whose search passed the request's time limit (answered 504)."""

# --- exceptions (OpenTelemetry semantic conventions) ---------------------------------

EXCEPTION_EVENT = "exception"
"""Name of the span event ``Span.record_exception`` adds: an exception raised inside the span."""

EXCEPTION_TYPE = "exception.type"
"""On an exception event: the exception's class name."""

EXCEPTION_MESSAGE = "exception.message"
"""On an exception event: the exception's message."""

EXCEPTION_STACKTRACE = "exception.stacktrace"
"""On an exception event: the traceback, as Python prints it."""


# --- foreign searches (read from another retriever's spans: ``traces.spans.foreign``) ---------------

DOCUMENT_METADATA = "document.metadata"
"""OpenInference suffix: a document's metadata, a JSON string (or a mapping); a user-named key of it may hold
the document's id when ``document.id`` is missing (``traces id-key``)."""

OWN_SCOPE = "searchtrace"
"""Our tracers' instrumentation scope (``searchtrace``, ``searchtrace.serve``, ``searchtrace.eval``): a span
under it, or one carrying a ``searchtrace.`` attribute, is ours, never a foreign search."""

OWN_PREFIX = "searchtrace."
"""The prefix of our own attribute keys."""

SERVICE_NAME = "service.name"
"""OpenTelemetry resource attribute: the program that sent the spans (a foreign search's service)."""

PROJECT_NAME = "openinference.project.name"
"""OpenInference resource attribute: the project the spans belong to (Phoenix and Langfuse key on it)."""

RERANKER_QUERY = "reranker.query"
"""OpenInference: the query a reranker reranked for."""

GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
"""GenAI semantic convention: the operation; :data:`GEN_AI_RETRIEVAL` marks a retrieval span."""

GEN_AI_RETRIEVAL = "retrieval"
"""The ``gen_ai.operation.name`` of a GenAI retrieval span."""

GEN_AI_EMBEDDINGS = "embeddings"
"""The ``gen_ai.operation.name`` of a GenAI embeddings span (a stage of the search around it)."""

GEN_AI_RETRIEVAL_QUERY = "gen_ai.retrieval.query.text"
"""GenAI semantic convention: a retrieval's query text."""

GEN_AI_RETRIEVAL_DOCUMENTS = "gen_ai.retrieval.documents"
"""GenAI semantic convention: the documents retrieved, on a span a JSON string of ``[{"id", "score"}]``."""

GEN_AI_DATA_SOURCE_ID = "gen_ai.data_source.id"
"""GenAI semantic convention: the data source (index, collection) a retrieval searched."""

GEN_AI_RETRIEVAL_TOP_K = "gen_ai.retrieval.top_k"
"""GenAI semantic convention (semantic-conventions-genai 0.1.0): how many documents a retrieval asked for."""

GEN_AI_REQUEST_TOP_K = "gen_ai.request.top_k"
"""GenAI semantic convention before 0.1.0 (semantic-conventions 1.41): a retrieval's top k, still sent by older
instrumentations; read when :data:`GEN_AI_RETRIEVAL_TOP_K` is absent."""


class Convention(str, enum.Enum):
    """Which convention a foreign search span follows (stored in the search table: never renamed)."""

    OPENINFERENCE = "openinference"
    GENAI = "genai"
