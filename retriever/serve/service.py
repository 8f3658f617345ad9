"""What HTTP and MCP both serve: the open datasets, bounded and timed searches off the event loop, stats.

Each served dataset holds one open index and four retrievers on it that differ
only in search settings: the configured hybrid fusion, ``keyword_then_dense``,
BM25 alone (dense and graph weights 0) and dense alone (keyword and graph
weights 0). No stage code is repeated: a weight of 0 skips a stage, as
everywhere else.
"""

from __future__ import annotations

import asyncio
import contextvars
import enum
import logging
import re
import statistics
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import SpanKind, Status, StatusCode

from searchtrace.errors import (
    BackendUnavailable,
    ErrorCode,
    NotFoundError,
    Overloaded,
    PayloadTooLarge,
    SearchTimeout,
    SearchtraceError,
    ValidationError,
    os_error_message,
)
from searchtrace.names import Stage
from searchtrace.retriever.config.model import FusionConfig, RetrieverConfig
from searchtrace.retriever.request import MAX_TOP_K, MAX_TOP_K_FIELD
from searchtrace.retriever.response import SearchResponse
from searchtrace.retriever.search.pipeline import Retriever
from searchtrace.retriever.serve.batcher import BatchingEncoder
from searchtrace.retriever.serve.config import MAX_IDS, MAX_RESPONSE_BYTES, TRACE_ACK_TIMEOUT_S, ServeConfig
from searchtrace.retriever.serve.schemas import TRACE_ID_FIELD, search_fields
from searchtrace.retriever.serve.workers import WorkerRow, WorkerState
from searchtrace.retriever.types import FusionMethod
from searchtrace.traces import StoreCommits, TraceFilter, TraceKind, TraceStoreProtocol
from searchtrace.traces import attributes as attrs
from searchtrace.traces import vocabulary as v

log = logging.getLogger(__name__)
T = TypeVar("T")

STATUS = {ErrorCode.VALIDATION_ERROR: 400, ErrorCode.UNAUTHORIZED: 401, ErrorCode.NOT_FOUND: 404,
          ErrorCode.PAYLOAD_TOO_LARGE: 413, ErrorCode.OVERLOADED: 429, ErrorCode.SEARCH_ERROR: 500,
          ErrorCode.BACKEND_UNAVAILABLE: 503, ErrorCode.TIMEOUT: 504}
"""The HTTP status of each error code."""

SERVER_FIELDS = ("dataset", "fusion")
"""Request fields the server reads itself (which dataset, which fusion) before the retriever's validation."""


class Variant(str, enum.Enum):
    """Which of a dataset's retrievers answers: the search settings, never different stage code.

    ``hybrid``: every stage, fused by the request's ``fusion`` (a :class:`FusionMethod`, the names the
    CLI's ``--fusion`` takes), else the configured method; ``keyword`` and ``vector``: one stage.
    """

    HYBRID = "hybrid"
    KEYWORD = "keyword"
    VECTOR = "vector"


def variant_config(config: RetrieverConfig, variant: Variant, method: FusionMethod | None = None) -> RetrieverConfig:
    """The search settings of one variant (and for the hybrid one, one fusion method), derived from the
    configured ones."""
    fusion = config.fusion
    if variant is Variant.HYBRID:
        if method is None or method is fusion.method:
            return config
        if method is FusionMethod.KEYWORD_THEN_DENSE:
            weights = {**fusion.weights, Stage.KEYWORD: fusion.weight(Stage.KEYWORD) or 1.0}
            return replace(config, fusion=FusionConfig(method=method, k0=fusion.k0, weights=weights))
        return replace(config, fusion=replace(fusion, method=method))
    fused = fusion.method if fusion.method is not FusionMethod.KEYWORD_THEN_DENSE else FusionMethod.DBSF
    only = Stage.KEYWORD if variant is Variant.KEYWORD else Stage.DENSE
    weights = {stage: 1.0 if stage is only else 0.0 for stage in (Stage.DENSE, Stage.KEYWORD, Stage.GRAPH)}
    return replace(config, fusion=FusionConfig(method=fused, k0=fusion.k0, weights=weights))


def passages_only(config: RetrieverConfig) -> RetrieverConfig:
    """The same search showing no relation hits: ``top_k`` passages (the facts still in ``kg``), as a system whose
    results are documents answers (``serve --dialect``)."""
    return replace(config, graph=replace(config.graph, max_relation_hits=0))


@dataclass(frozen=True)
class Served:
    """One open dataset: its name, its retrievers by variant, the hybrid one by fusion method, and each hybrid
    one showing passages only (:func:`passages_only`)."""

    name: str
    retrievers: Mapping[Variant, Retriever]
    fusions: Mapping[FusionMethod, Retriever]
    documents: Mapping[FusionMethod, Retriever] = field(default_factory=dict)

    @property
    def main(self) -> Retriever:
        return self.retrievers[Variant.HYBRID]


Opener = Callable[[Path, RetrieverConfig], Retriever]
"""Opens (indexing first if needed) the hybrid retriever of one dataset folder."""


class Service:
    """The datasets a server answers for, and the one way every search runs.

    Args:
        datasets: dataset folders; a request's ``dataset`` field names one by its folder name.
        config: the retriever configuration (the hybrid variant's settings).
        serve: limits, timeout, dashboard URL.
        opener: opens one dataset's hybrid retriever (indexes it if needed).
        tracer: the tracer of the server spans (the retrievers' own).
        store: the trace store, for the latency figures of ``stats`` (None: none).
        trace_export: this process's trace export counters for ``stats`` (``TraceHandles.store_status``).
        commits: the store's group commits, which an answer waits for (None: no store, nothing to wait for).
        worker: this process's row of the workers' shared board, when it is one of
            ``--workers N`` (None: the only process): readiness and counters cover them all.
    """

    def __init__(self, datasets: Sequence[Path], config: RetrieverConfig, serve: ServeConfig, opener: Opener, *,
                 tracer: trace.Tracer, store: TraceStoreProtocol | None = None, commits: StoreCommits | None = None,
                 worker: WorkerRow | None = None, trace_export: Callable[[], dict[str, object] | None] | None = None
                 ) -> None:
        names = [Path(d).name for d in datasets]
        if not names:
            raise ValidationError("serve needs at least one dataset folder", field="dataset")
        if len(set(names)) != len(names):
            raise ValidationError(f"two datasets share a folder name: {', '.join(names)}", field="dataset")
        self.dataset_paths = {n: Path(d) for n, d in zip(names, datasets)}
        self.config = config
        self.serve = serve
        self.tracer = tracer
        self.store = store
        self.commits = commits if serve.trace_ack else None
        self._opener = opener
        self.worker = worker
        self._trace_export = trace_export
        self._served: dict[str, Served] = {}
        self._opening_error: str | None = None
        self._slots = threading.BoundedSemaphore(serve.max_inflight)
        self._executor = ThreadPoolExecutor(max_workers=serve.max_inflight, thread_name_prefix="search")
        self._count_lock = threading.Lock()
        self.searches_served = 0
        self.started = time.time()

    # -- lifecycle ---------------------------------------------------------

    def open(self) -> None:
        """Open every dataset (indexing it first if needed); blocking. Records a failure for ``readyz``."""
        try:
            for name, path in self.dataset_paths.items():
                hybrid = self._opener(path, variant_config(self.config, Variant.HYBRID))

                def sibling(config: RetrieverConfig, hybrid: Retriever = hybrid) -> Retriever:
                    return Retriever(hybrid.index, hybrid.embedder, config, tracer=hybrid.tracer,
                                     relevance=hybrid.relevance, reranker=hybrid.reranker, capture=hybrid.capture,
                                     deferred=hybrid.deferred, source=hybrid.source)

                retrievers = {Variant.HYBRID: hybrid, Variant.KEYWORD: sibling(variant_config(self.config, Variant.KEYWORD)),
                              Variant.VECTOR: sibling(variant_config(self.config, Variant.VECTOR))}
                fusions = {m: hybrid if m is self.config.fusion.method
                           else sibling(variant_config(self.config, Variant.HYBRID, m)) for m in FusionMethod}
                documents = {m: sibling(passages_only(r.config)) for m, r in fusions.items()}
                hybrid.embedder.encode_query("ready")  # the model loaded before readyz says so
                self._served[name] = Served(name, retrievers, fusions, documents)
        except Exception as exc:
            self._opening_error = getattr(exc, "message", None) or (
                os_error_message(exc) if isinstance(exc, OSError) else str(exc))
            if isinstance(exc, (SearchtraceError, OSError)):  # said in one line (and by /readyz)
                log.error("opening the datasets failed: %s", self._opening_error)
            else:
                log.exception("opening the datasets failed")
            if self.worker is not None:
                self.worker.set_state(WorkerState.FAILED)
            raise
        if self.worker is not None:
            self.worker.set_state(WorkerState.READY)

    @property
    def ready(self) -> bool:
        """Every dataset open (its index verified, the model loadable)."""
        return len(self._served) == len(self.dataset_paths)

    def readiness(self) -> dict[str, Any]:
        """What ``/readyz`` answers: ready or not (with several workers: all of them), and why not."""
        out: dict[str, Any] = {"ready": self.ready, "datasets": {n: n in self._served for n in self.dataset_paths}}
        if self.worker is not None:
            states = [row["state"] for row in self.worker.board.rows()]
            ready = states.count(WorkerState.READY.name.lower())
            out["ready"] = self.ready and ready == len(states)
            out["workers"] = {"ready": ready, "total": len(states)}
        if self._opening_error:
            out["error"] = self._opening_error
        return out

    def close(self) -> None:
        """Stop the search threads and close every index."""
        self._executor.shutdown(wait=False, cancel_futures=True)
        for served in self._served.values():
            served.main.close()

    async def acknowledge(self) -> None:
        """Wait (at most ``TRACE_ACK_TIMEOUT_S``) until the spans of the requests that ended so far, this one's
        included, are in the trace store: called between a request's root span ending and its answer."""
        if self.commits is not None:
            await self.commits.stored(TRACE_ACK_TIMEOUT_S)

    # -- the one way a search runs -------------------------------------------

    def served(self, name: object) -> Served:
        """The dataset a request names (None: the first). Raises NotFoundError or BackendUnavailable."""
        if name is not None and (not isinstance(name, str) or not name):
            raise ValidationError(f"dataset must be one of {', '.join(self.dataset_paths)}, got {name!r}",
                                  field="dataset")
        name = name or next(iter(self.dataset_paths))
        if name not in self.dataset_paths:
            raise NotFoundError(f"unknown dataset {name!r}; served: {', '.join(self.dataset_paths)}",
                                field="dataset")
        if name not in self._served:
            raise BackendUnavailable(f"dataset {name!r} is still opening" if not self._opening_error
                                     else f"dataset {name!r} could not be opened: {self._opening_error}")
        return self._served[name]

    async def search(self, body: Any, variant: Variant | None, source: v.Source, *,
                     facts: bool = True) -> SearchResponse:
        """Run one search (``body``: the request, plus ``dataset`` and for the hybrid search ``fusion``).

        ``facts``: relation hits take ``top_k`` places (False: the hybrid search shows passages only, for a
        dialect whose results are documents). Returns the response (with its trace's URL when a dashboard is
        set) or raises a SearchtraceError.
        """
        if not isinstance(body, Mapping):
            raise ValidationError(f"request must be a JSON object, got {type(body).__name__}")
        if variant is not None and "fusion" in body:
            raise ValidationError("fusion is chosen by this endpoint; leave it out", field="fusion")
        allowed = search_fields(with_fusion=variant is None)
        unknown = [str(k) for k in body if k not in allowed]
        if unknown:
            raise ValidationError(f"{unknown[0]}: unknown field; allowed fields: {', '.join(allowed)}",
                                  field=unknown[0])
        request = {k: x for k, x in body.items() if k not in SERVER_FIELDS}
        for name in SERVER_FIELDS:  # absent means the default; null or "" is not a value the schema allows
            if name in body and (not isinstance(body[name], str) or not body[name]):
                raise ValidationError(f"{name} must be one of the values the schema lists, got {body[name]!r}",
                                      field=name)
        served = self.served(body.get("dataset"))
        method = _fusion(body["fusion"]) if "fusion" in body else self.config.fusion.method
        retriever = served.retrievers[variant] if variant is not None else (
            served.fusions[method] if facts or not served.documents else served.documents[method])
        response = await self.run(lambda: retriever.search(request, source=source))
        with self._count_lock:
            self.searches_served += 1
            if self.worker is not None:
                model = served.main.embedder
                self.worker.publish(self.searches_served, getattr(model, "queries", 0), getattr(model, "calls", 0))
        return response.with_trace_url(self.serve.trace_url(response.trace_id))

    async def run(self, work: Callable[[], T]) -> T:
        """Run ``work`` on a search thread, in the caller's trace context, bounded and timed.

        Raises:
            Overloaded: every search slot is taken (the caller answers 429).
            SearchTimeout: it took longer than the timeout (it finishes in the background).
        """
        if not self._slots.acquire(blocking=False):
            raise Overloaded(f"{self.serve.max_inflight} searches are running; try again shortly")
        ctx = contextvars.copy_context()

        def job() -> T:
            try:
                return ctx.run(work)
            finally:
                self._slots.release()

        try:
            future = self._executor.submit(job)
        except RuntimeError:  # shutting down
            self._slots.release()
            raise BackendUnavailable("the server is shutting down") from None
        try:
            # shield: a timeout must not cancel a queued job, whose slot only it releases
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), self.serve.timeout_s)
        except TimeoutError:
            raise SearchTimeout(f"the search took longer than {self.serve.timeout_s:g} s") from None

    # -- documents and stats -----------------------------------------------

    async def documents(self, ids: Sequence[str], dataset: str | None, chunks: bool,
                        follows: object = None) -> list[dict]:
        """Documents (or chunks) by id, bounded in count and bytes; ``follows``: the trace id of the search whose
        results the caller fetches them from, if it names one (``traceId``).

        What was fetched (dataset, ids in order, the search followed) goes on the request's server span once the
        answer is ready: ``judge implicit`` reads it as clicks.

        Raises:
            ValidationError: no ids, too many, or a ``traceId`` that is not 32 lowercase hex digits.
            NotFoundError: naming unknown ids.
        """
        ids = check_ids(ids)
        follows = check_trace_id(follows)
        served = self.served(dataset)
        get = served.main.get_chunks if chunks else served.main.get_docs
        found = await self.run(lambda: get(list(ids)))
        size = sum(len(str(d)) for d in found)
        if size > MAX_RESPONSE_BYTES:
            raise PayloadTooLarge(f"the {len(ids)} documents asked for are about {size:,} bytes; "
                        f"the most one answer carries is {MAX_RESPONSE_BYTES:,}: ask for fewer ids", field="ids")
        trace.get_current_span().set_attributes(attrs.fetch(served.main.index.manifest.dataset, ids, follows))
        return found

    def stats(self) -> dict[str, Any]:
        """Per dataset: documents, triples, model, index key and build time; the most results a search
        answers (``maxTopK``, which ``eval --target`` asks for at most); searches served; latency."""
        datasets = {}
        for name, served in self._served.items():
            m = served.main.index.manifest
            datasets[name] = {"documents": m.n_docs, "triples": m.n_triples, "model": m.model, "indexKey": m.key,
                              "builtAt": datetime.fromtimestamp(m.built_at, UTC).isoformat(),
                              "buildSeconds": round(m.build_seconds, 3)}
        out = {"datasets": datasets, MAX_TOP_K_FIELD: MAX_TOP_K, "searchesServed": self.searches_served,
               "uptimeSeconds": round(time.time() - self.started, 1), **self._latency()}
        if self._trace_export is not None and (export := self._trace_export()) is not None:
            out["traceExport"] = export
        embedder = next(iter(self._served.values())).main.embedder if self._served else None
        if isinstance(embedder, BatchingEncoder):
            out["queryEmbedding"] = {"queries": embedder.queries, "modelCalls": embedder.calls}
        if self.worker is not None:  # every worker's counters, and their totals
            rows = self.worker.board.rows()
            out["workers"] = rows
            out["searchesServed"] = sum(r["searches"] for r in rows)
            out["queryEmbedding"] = {"queries": sum(r["queries"] for r in rows),
                                     "modelCalls": sum(r["modelCalls"] for r in rows)}
        return out

    def _latency(self) -> dict[str, Any]:
        """p50/p95 of the searches this server answered, from the trace store (None without one)."""
        if self.store is None:
            return {"latencyMs": None}
        since = int(self.started * 1e9)
        searches = TraceFilter(since=since, kind=TraceKind.SEARCH, limit=5000)
        try:
            rows = [t.duration_ms for t in self.store.list_traces(searches) if t.complete]
        except SearchtraceError as exc:  # a shared store out of reach: the figures are missing, the answer is not
            return {"latencyMs": None, "latencyError": exc.message}
        if len(rows) < 2:
            return {"latencyMs": {"traces": len(rows), "p50": rows[0] if rows else None, "p95": None}}
        q = statistics.quantiles(rows, n=100, method="inclusive")
        return {"latencyMs": {"traces": len(rows), "p50": round(q[49], 2), "p95": round(q[94], 2)}}

    # -- server spans --------------------------------------------------------

    async def refused(self, name: str, source: v.Source, status: int, exc: SearchtraceError) -> str:
        """Record a request refused before any route ran (its server span, with the error) and return its
        trace id, once the trace is stored like every answer's."""
        trace_id = ""
        try:
            with self.server_span(name, source, None, {v.HTTP_RESPONSE_STATUS_CODE: status}) as span:
                trace_id = format(span.get_span_context().trace_id, "032x")
                raise exc
        except SearchtraceError:
            pass
        await self.acknowledge()
        return trace_id

    @contextmanager
    def server_span(self, name: str, source: v.Source, parent: Context | None,
                    attributes: Mapping[str, Any]) -> Iterator[trace.Span]:
        """The server span of one request (HTTP or MCP tool call), current while the request runs.

        An error raised inside is recorded on it (code, message, 504 as timed out) and re-raised.
        """
        opening = {v.SOURCE: source.value, **attributes}
        with self.tracer.start_as_current_span(name, context=parent, kind=SpanKind.SERVER, attributes=opening,
                                               record_exception=False, set_status_on_exception=False) as span:
            try:
                yield span
            except SearchtraceError as exc:
                span.set_status(Status(StatusCode.ERROR, exc.message))
                span.set_attribute(v.ERROR_CODE, exc.code.value)
                if exc.code is ErrorCode.TIMEOUT:
                    span.set_attribute(v.TIMED_OUT, True)
                raise
            except Exception as exc:
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, str(exc)))
                span.set_attribute(v.ERROR_CODE, ErrorCode.SEARCH_ERROR.value)
                raise


def check_ids(ids: Sequence[str]) -> list[str]:
    """Ids asked for, at least one and at most :data:`MAX_IDS`. Raises ValidationError."""
    ids = [i for i in ids if i]
    if not ids:
        raise ValidationError("ids: give at least one document id", field="ids")
    if len(ids) > MAX_IDS:
        raise ValidationError(f"ids: {len(ids)} ids; the most one call takes is {MAX_IDS}", field="ids")
    return ids


TRACE_ID = re.compile(r"[0-9a-f]{32}")
"""A search's ``traceId``: 32 lowercase hex digits (W3C trace context)."""


def check_trace_id(value: object) -> str | None:
    """``value`` when it is a trace id (None when absent). Raises ValidationError naming the field."""
    if value is None:
        return None
    if not isinstance(value, str) or not TRACE_ID.fullmatch(value):
        raise ValidationError(f"{TRACE_ID_FIELD} must be a search's trace id, 32 lowercase hex digits, "
                              f"got {value!r:.80}", field=TRACE_ID_FIELD)
    return value


def _fusion(value: object) -> FusionMethod:
    try:
        return FusionMethod(value)
    except ValueError:
        raise ValidationError(f"fusion must be one of {', '.join(m.value for m in FusionMethod)}, got {value!r}",
                              field="fusion") from None

