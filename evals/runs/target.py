"""Any retriever as an eval target: a service speaking the search contract, or a Python callable.

``eval DATASET --target URL`` POSTs each request dict (what ``Retriever.search``
takes) as JSON to ``URL/v1/search`` and reads the response dict back;
``--target module:function`` calls ``function(request) -> response``. A
:class:`TargetRetriever` stands in for the local :class:`Retriever` in the
eval runner, so the run is traced (one ``search`` span per query, naming the
target and the trace id its response carried), journaled and resumable, and
ends in the same run folder.

The response's order is the ranking: its scores are rounded relevance and
tie, so ``run.trec`` scores each result by its position (n, n-1, ..., 1).
A target is asked for the depth the eval scores: a function as deep as
``--depth``, a service up to the most results it answers, as its
``GET /v1/stats`` states (``maxTopK``; :func:`depth_to_ask`).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from searchtrace.errors import (
    BackendUnavailable,
    Overloaded,
    SearchFailed,
    SearchTimeout,
    SearchtraceError,
    ValidationError,
    error_from_object,
)
from searchtrace.evals.runs.client import OVERLOADED_STATUSES, map_bounded, retry_after_seconds, stream_bounded
from searchtrace.evals.runs.masking import mask_target, redact, secrets_of
from searchtrace.evals.runs.runfolder import ExternalRun
from searchtrace.evals.runs.targets.keepalive import KeepAlive, plain_http
from searchtrace.evals.runs.targets.wire import json_of, trace_carrier
from searchtrace.retriever import (
    FORMER_MAX_TOP_K,
    MAX_TOP_K_FIELD,
    Answer,
    Ranking,
    RetrieverConfig,
    SearchDetail,
    SearchResponse,
)
from searchtrace.traces import attributes as attrs
from searchtrace.traces import vocabulary as v

__all__ = ["SEARCH_PATH", "STATS_PATH", "HttpTarget", "TargetRetriever", "depth_to_ask", "resolve_target",
           "short_answers"]

SEARCH_PATH = "/v1/search"
"""Where a target service answers searches."""
STATS_PATH = "/v1/stats"
"""Where a target service states the most results it answers (``maxTopK``)."""


SearchFn = Callable[[dict[str, Any]], Mapping[str, Any]]


class HttpTarget:
    """POST a request to ``URL/v1/search`` (the eval's ``traceparent`` in its headers); the response dict, or the
    failure raised by the error seam.

    A 429 or 503 is :class:`Overloaded` (with its ``Retry-After``), a timeout :class:`SearchTimeout`, no
    connection :class:`BackendUnavailable`, an answer that is not a JSON object (or an error status without
    an error object) :class:`SearchFailed`; an error object is raised as the error it names. Messages name
    the URL masked (:func:`~searchtrace.evals.runs.masking.mask_target`). A plain ``http://`` URL is posted
    to over a kept ``http.client`` connection (:mod:`~searchtrace.evals.runs.targets.keepalive`), through
    ``httpx`` where that cannot answer as ``httpx`` would.

    Args:
        url: the service's base URL.
        timeout_s: per request.
        transport: an ``httpx`` transport (tests answer with ``httpx.MockTransport``); default: the network.
    """

    def __init__(self, url: str, timeout_s: float = 60.0, transport: Any = None) -> None:
        parts = urlsplit(url)  # a query string (a token in it) stays after the path
        self.url = urlunsplit(parts._replace(path=parts.path.rstrip("/") + SEARCH_PATH))
        self.stats_url = urlunsplit(parts._replace(path=parts.path.rstrip("/") + STATS_PATH))
        self.shown = mask_target(self.url)
        self.timeout_s = timeout_s
        self._transport = transport
        self._secrets = secrets_of(url)
        self._client: Any = None
        self._direct = KeepAlive(self.url, timeout_s) if transport is None and plain_http(self.url) else None

    def _http(self) -> Any:
        import httpx

        if self._client is None:
            self._client = httpx.Client(timeout=self.timeout_s, transport=self._transport)
        return self._client

    def __call__(self, request: dict[str, Any]) -> Mapping[str, Any]:
        carrier = trace_carrier()  # the eval's search span: a service that joins it lands in the eval's trace
        reply = self._post_directly(self._direct, request, carrier) if self._direct is not None else None
        if reply is None:
            reply = self._post(request, carrier)
        if reply.status_code in OVERLOADED_STATUSES:
            raise Overloaded(f"{self.shown}: HTTP {reply.status_code}",
                             retry_after_s=retry_after_seconds(reply.headers.get("Retry-After")))
        try:
            body = json_of(reply)
        except ValueError:
            why = "" if reply.is_error else ", the answer is not JSON"
            raise SearchFailed(f"{self.shown}: HTTP {reply.status_code}{why}") from None
        if not isinstance(body, dict):
            raise SearchFailed(f"{self.shown}: the response is not a JSON object")
        if reply.is_error and "error" not in body:
            raise SearchFailed(f"{self.shown}: HTTP {reply.status_code}")
        return body

    def _post_directly(self, direct: KeepAlive, request: dict[str, Any], headers: dict[str, str]) -> Any:
        """The answer over a kept ``http.client`` connection; None where ``httpx`` must ask (:mod:`.keepalive`)."""
        try:
            return direct.post(request, headers)
        except TimeoutError:
            raise SearchTimeout(f"{self.shown}: no answer within {self.timeout_s:g} s") from None

    def _post(self, request: dict[str, Any], headers: dict[str, str]) -> Any:
        import httpx

        try:
            return self._http().post(self.url, json=request, headers=headers)
        except httpx.TimeoutException:
            raise SearchTimeout(f"{self.shown}: no answer within {self.timeout_s:g} s") from None
        except httpx.HTTPError as exc:
            raise BackendUnavailable(f"{self.shown}: {redact(str(exc), self._secrets) or type(exc).__name__}") \
                from None

    def max_top_k(self) -> int | None:
        """The most results the service answers, as its ``GET /v1/stats`` states (None: it states none)."""
        import httpx

        try:
            reply = self._http().get(self.stats_url)
            body = reply.json() if reply.is_success else None
        except (httpx.HTTPError, ValueError):
            return None
        value = body.get(MAX_TOP_K_FIELD) if isinstance(body, dict) else None
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None

    def check(self) -> None:
        """Fail now when nothing answers at the URL, rather than scoring every query as an error.

        Any HTTP reply counts as reachable (a ``HEAD`` on a search route is usually 405);
        only a failed connection, a timeout or a protocol error does not.

        Raises:
            BackendUnavailable: nothing answered, with the URL and the reason.
        """
        import httpx

        try:
            self._http().head(self.url, timeout=min(self.timeout_s, 10.0))
        except httpx.HTTPError as exc:
            why = redact(str(exc), self._secrets) or type(exc).__name__
            raise BackendUnavailable(f"--target: nothing answers at {self.shown} ({why}); "
                                     "start the service or fix the URL") from None

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
        if self._direct is not None:
            self._direct.close()


def resolve_target(spec: str, timeout_s: float | None = None) -> SearchFn:
    """The search function ``spec`` names: an ``http(s)://`` URL, ``module:function``, or a shaped target
    (an MCP tool, a target file, a profile: :mod:`searchtrace.evals.runs.targets`).

    ``timeout_s`` is each request's limit (None: a target file's own, else 60 s); a Python function is called as
    it is (it keeps its own).

    Raises:
        ValidationError: neither form, or a module or function that cannot be loaded.
        BackendUnavailable: nothing answers at the URL.
    """
    from searchtrace.evals.runs.targets import is_shaped, open_shaped

    if is_shaped(spec):
        return open_shaped(spec, timeout_s)
    if spec.startswith(("http://", "https://")):
        target = HttpTarget(spec, 60.0 if timeout_s is None else timeout_s)
        target.check()
        return target
    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        raise ValidationError(f"--target must be an http(s):// URL or module:function, got {spec!r}", field="target")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValidationError(f"--target {spec}: cannot import {module_name!r}: {exc}", field="target") from None
    function = getattr(module, name, None)
    if not callable(function):
        raise ValidationError(f"--target {spec}: {module_name} has no function {name!r}", field="target")
    return function


def depth_to_ask(search: SearchFn, depth: int) -> tuple[int, str | None]:
    """How deep to ask ``search`` for each query's ranking, and a warning when less than ``depth``.

    A function is asked for ``depth``; a service for ``depth`` up to the maximum its
    ``GET /v1/stats`` states, or :data:`FORMER_MAX_TOP_K` (the limit before servers
    stated theirs) when it states none; a shaped target up to its ``depth_limit`` (a cap it
    cannot be paged past).
    """
    if not isinstance(search, HttpTarget):
        cap = getattr(search, "depth_limit", None)  # a shaped target's service answering at most N, unpaged
        if isinstance(cap, int) and depth > cap:
            return cap, f"--depth {depth} is above the most the target answers ({cap}, no paging); asking for {cap}"
        return depth, None
    stated = search.max_top_k()
    limit = FORMER_MAX_TOP_K if stated is None else stated
    if depth <= limit:
        return depth, None
    if stated is None:
        return limit, f"the target states no {MAX_TOP_K_FIELD}; --depth {depth} asks for {limit}"
    return limit, f"--depth {depth} is above the target's {MAX_TOP_K_FIELD} {limit}; asking for {limit}"


def short_answers(lengths: Sequence[int], asked: int, documents: int) -> str | None:
    """A warning when queries got fewer results than ``asked`` though the corpus has more documents.

    Args:
        lengths: the results each answered query got.
        asked: the results asked for per query.
        documents: the corpus's documents.
    """
    short = sum(1 for n in lengths if n < min(asked, documents))
    if not short:
        return None
    return (f"{short} of {len(lengths)} queries got fewer than the {asked} results asked "
            f"(at most {max(lengths)})")


def detail_of(ranking: Ranking) -> SearchDetail:
    """What the runner reads off a local search, from a response's ranking of passages (best first)."""
    ids = ranking.ids
    return SearchDetail(stage_ids={}, fused_ids=ids, dropped_ids=(), ranking=ids,
                        ranking_scores=tuple(map(float, range(len(ids), 0, -1))),
                        relevance=ranking.scores, bands=ranking.bands, features=np.zeros((len(ids), 0)))


def _response_of(spec: str, answer: Any, shown: int) -> tuple[SearchResponse, Ranking]:
    """The target's answer as a response with its first ``shown`` passages, and its ranking; its error object
    raised as the error it names."""
    error = error_from_object(answer)
    if error is not None:
        raise error
    try:
        return SearchResponse.ranked_from_json(answer, shown)
    except ValidationError as exc:
        raise SearchFailed(f"{spec}: response {exc.message}") from None


class TargetRetriever:
    """The part of :class:`~searchtrace.retriever.Retriever` the eval runner uses, over a target.

    Args:
        search: the target's search function.
        spec: how the target was named (URL or ``module:function``); recorded and shown masked.
        tracer: opens each search's span.
        config: the local configuration (its home holds the run's traces).
        depth: results asked for per query (see :func:`depth_to_ask`).
        shown: results a caller would see (bands are judged on these).
        concurrency: searches in flight at once (threads; 1: one after another, on the caller's thread).
    """

    def __init__(self, search: SearchFn, spec: str, tracer: trace.Tracer, config: RetrieverConfig, *,
                 depth: int, shown: int, concurrency: int = 1) -> None:
        self.search_fn, self.spec, self.tracer, self.config = search, mask_target(spec), tracer, config
        self.depth, self.shown, self.concurrency = depth, shown, concurrency
        self.index_key = ""
        self.external = ExternalRun(kind="target", source=self.spec)
        self._secrets = secrets_of(spec)
        self._pool = None if concurrency < 2 else ThreadPoolExecutor(concurrency, thread_name_prefix="target")

    def close(self) -> None:
        if self._pool is not None:  # an interrupted run's searches in flight are not waited for
            self._pool.shutdown(wait=False, cancel_futures=True)
        close = getattr(self.search_fn, "close", None)
        if callable(close):
            close()

    def search_detailed(self, request: Mapping[str, Any], *, query_vector: Any = None, run_id: str | None = None,
                        query_id: str | None = None) -> tuple[SearchResponse, SearchDetail]:
        """One search of the target, under its ``search`` span. Raises the target's error (or its failure)."""
        asked = {**request, "top_k": max(int(request.get("top_k", 1)), self.depth)}
        span_attrs = {**attrs.span_kind(v.SEARCH_SPAN), **attrs.eval_context(run_id, query_id), v.TARGET: self.spec}
        with self.tracer.start_as_current_span(v.SEARCH_SPAN, attributes=span_attrs, record_exception=False,
                                               set_status_on_exception=False) as span:
            try:
                response, ranking = _response_of(self.spec, self._call(asked), self.shown)
                if response.trace_id:
                    span.set_attribute(v.TARGET_TRACE_ID, response.trace_id)
            except SearchtraceError as exc:
                exc.message = redact(exc.message, self._secrets)  # a transport's message may quote the raw URL
                exc.args = (exc.message,)
                span.set_status(Status(StatusCode.ERROR, exc.message))
                span.set_attribute(v.ERROR_CODE, exc.code.value)
                raise
            trace_id = format(span.get_span_context().trace_id, "032x")
        return replace(response, trace_id=trace_id, trace_url=None), detail_of(ranking)

    def _call(self, request: dict[str, Any]) -> Any:
        try:
            return self.search_fn(request)
        except SearchtraceError:
            raise
        except Exception as exc:  # the target's own failure: this query's error, never the run's
            raise SearchFailed(f"{self.spec}: {type(exc).__name__}: {exc}") from exc

    def search_many_detailed(self, requests: Sequence[Mapping[str, Any]], *, run_id: str | None = None,
                             query_ids: Sequence[str] | None = None) -> list[Answer]:
        """:meth:`search_detailed` of each request, answers in order, up to ``concurrency`` in flight; a failed
        one is its answer's error."""
        ids: Sequence[str | None] = query_ids if query_ids is not None else [None] * len(requests)
        calls = [functools.partial(self.search_detailed, request, run_id=run_id, query_id=query_id)
                 for request, query_id in zip(requests, ids)]
        return map_bounded(Answer.timed, calls, self._pool)

    def search_stream(self, requests: Sequence[Mapping[str, Any]], *, run_id: str | None = None,
                      query_ids: Sequence[str] | None = None) -> Iterator[tuple[int, Answer]]:
        """``(index, answer)`` of each request as it is answered, ``concurrency`` kept in flight throughout
        (a slow query holds back no other); a failed one is its answer's error."""
        ids: Sequence[str | None] = query_ids if query_ids is not None else [None] * len(requests)
        calls = [functools.partial(self.search_detailed, request, run_id=run_id, query_id=query_id)
                 for request, query_id in zip(requests, ids)]
        return stream_bounded(Answer.timed, calls, self._pool, self.concurrency)
