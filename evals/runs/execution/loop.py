"""Searching an eval's queries: every query of a split through the retriever, traced and journaled.

A run folder (:class:`~searchtrace.evals.runs.runfolder.RunFolder`) holds
``settings.json`` (written first), ``journal.jsonl`` (one record per completed
query), and when the run completes ``run.json``, ``per_query.parquet``,
``results.parquet`` and ``run.trec``. Started again on a folder with a journal
and no ``run.json``, only the queries not yet journaled are searched.
Warnings go to this module's logger; the command line prints them as ``warning:`` lines.
"""

from __future__ import annotations

import errno
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from itertools import repeat
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from searchtrace.errors import BackendUnavailable, ErrorCode, SearchtraceError, ValidationError
from searchtrace.evals.runs.naming import RunLabel, run_id_stem, settings_of
from searchtrace.evals.runs.runfolder import EvalSettings, QueryOutcome, RankedResult, RunFolder
from searchtrace.evals.scoring.attribution import attribute
from searchtrace.evals.scoring.latency import StageTimer
from searchtrace.retriever import (
    DEFAULT_CANDIDATES,
    FEATURES,
    Answer,
    Dataset,
    Query,
    RetrieverConfig,
    SearchDetail,
    SearchResponse,
    config_json,
    load_dataset,
)
from searchtrace.traces import FailureKind, TraceHandles

__all__ = ["RESULTS_SHOWN", "TARGET_PREFIX", "RunContext", "Searcher", "Streaming", "execute", "load_for_run", "outcome_of",
           "rounded", "run_folder", "run_id", "search_batch", "search_one"]

log = logging.getLogger(__name__)

RESULTS_SHOWN = 10
"""The results an eval's searches return (their ``top_k``): bands and ``noConfidentResults`` are judged on these,
ten as a results page shows (a search's default, ``DEFAULT_TOP_K``, is five: an agent's answer). The ranking
scored is deeper: the run's ``depth``, from the search's candidates."""


TARGET_PREFIX = "target:"
"""How an ``eval --target`` run's settings name its retriever (``target:URL``)."""


class Searcher(Protocol):
    """What the runner needs of a retriever: the local ``Retriever``, or an ``eval --target``."""

    config: RetrieverConfig

    @property
    def index_key(self) -> str: ...

    def search_detailed(self, request: Mapping[str, Any], *, run_id: str | None = None,
                        query_id: str | None = None) -> tuple[SearchResponse, SearchDetail]: ...

    def search_many_detailed(self, requests: Sequence[Mapping[str, Any]], *, run_id: str | None = None,
                             query_ids: Sequence[str] | None = None) -> list[Answer]: ...

    def close(self) -> None: ...


@runtime_checkable
class Streaming(Protocol):
    """A retriever that keeps ``concurrency`` searches in flight and answers each as it finishes (a target)."""

    concurrency: int

    def search_stream(self, requests: Sequence[Mapping[str, Any]], *, run_id: str | None = None,
                      query_ids: Sequence[str] | None = None) -> Iterator[tuple[int, Answer]]: ...


@dataclass
class RunContext:
    """The live objects a run uses (``traces``: None when nothing is stored locally)."""

    retriever: Searcher
    timer: StageTimer
    traces: TraceHandles | None
    run_id: str
    dataset: Dataset
    settings: EvalSettings
    folder: RunFolder
    started: float = field(default_factory=time.perf_counter)


def run_folder(settings: EvalSettings, config: RetrieverConfig, out: Path | None,
               label: RunLabel | None = None) -> tuple[RunFolder, bool]:
    """The folder to write, and whether it resumes an interrupted run.

    With ``out``: resume it if it holds an interrupted run with the same
    settings; refuse a completed run or different settings. Without: resume the
    newest interrupted run with the same settings under ``<home>/runs``, else a new
    folder named by :func:`run_id`.
    """
    if out is not None:
        folder = RunFolder(out)
        if out.exists() and not out.is_dir():
            raise ValidationError(f"--out {out} is a file: name a folder for the run (it is created if missing)",
                                  field="out")
        if folder.is_complete:
            raise ValidationError(f"{out} already holds a completed run; choose another --out", field="out")
        if folder.settings_file.exists():
            stored = folder.settings()
            if stored != settings:
                raise ValidationError(_other_settings(out, stored, settings), field="out")
            return folder, True
        return folder, False
    runs = config.home.runs
    if runs.exists():
        for path in sorted(runs.iterdir(), reverse=True):
            candidate = RunFolder(path)
            if candidate.is_interrupted and _settings_or_none(candidate) == settings:
                return candidate, True
    return RunFolder(config.home.run(run_id(settings, config, label or RunLabel()))), False


def _other_settings(out: Path, stored: EvalSettings, asked: EvalSettings) -> str:
    """Why ``out`` is refused: each setting that differs (the folder's vs this run's), and what to do."""
    names = {"retriever": "retriever (search settings' fingerprint)"}
    differ = "; ".join(f"{names.get(name, name)}: {old} there vs {new} now"
                       for name, old, new in stored.differences(asked))
    return (f"{out} holds an interrupted run with other settings ({differ}): run again with its settings to "
            f"resume it, or give a new --out, or remove {out} to start over")


def run_id(settings: EvalSettings, config: RetrieverConfig, label: RunLabel) -> str:
    """``<name, else dataset-mode-changed settings>-<UTC time>-<settings key>``: readable, and unique."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    target = settings.retriever.startswith(TARGET_PREFIX)  # a target's search settings are not ours
    values = settings_of(settings, "target" if target else settings.mode, {} if target else config_json(config))
    return f"{run_id_stem(label, Path(settings.dataset).resolve().name, values)}-{stamp}-{settings.key()}"


def _settings_or_none(folder: RunFolder) -> EvalSettings | None:
    """An interrupted run's settings; None (and a warning) when its settings file is damaged."""
    try:
        return folder.settings()
    except SearchtraceError as exc:
        log.warning("skipping the interrupted run %s: %s", folder.path, exc.message)
        return None


def _request(settings: EvalSettings, text: str) -> dict[str, Any]:
    request: dict[str, Any] = {"query": text, "top_k": RESULTS_SHOWN,
                               "candidates": max(settings.depth, DEFAULT_CANDIDATES)}
    if settings.mode:
        request["mode"] = settings.mode
    return request


def search_batch(ctx: RunContext, queries: Sequence[Query]) -> list[QueryOutcome]:
    """Search a batch of queries (their vectors embedded together) and build their journal records."""
    requests = [_request(ctx.settings, q.text) for q in queries]
    answers = ctx.retriever.search_many_detailed(requests, run_id=ctx.run_id, query_ids=[q.id for q in queries])
    return [_answered(ctx, query, answer) for query, answer in zip(queries, answers)]


def _answered(ctx: RunContext, query: Query, answer: Answer) -> QueryOutcome:
    """One query's journal record from its answer: its ranking, or its error."""
    if answer.response is None or answer.detail is None:
        return failed(query, answer.error, {"total": round(answer.ms, 3)})
    latency = ctx.timer.pop(answer.response.trace_id)
    latency["total"] = round(answer.ms, 3)
    return outcome_of(ctx, query, answer.response, answer.detail, latency)


def search_one(ctx: RunContext, query: Query) -> QueryOutcome:
    """Search one query, its vector embedded by the search itself (the corrective loop's retries)."""
    started = time.perf_counter()
    try:
        response, detail = ctx.retriever.search_detailed(_request(ctx.settings, query.text), run_id=ctx.run_id,
                                                         query_id=query.id)
    except SearchtraceError as exc:
        return failed(query, exc, {"total": round((time.perf_counter() - started) * 1000, 3)})
    ms = (time.perf_counter() - started) * 1000
    latency = ctx.timer.pop(response.trace_id)
    latency["total"] = round(ms, 3)
    return outcome_of(ctx, query, response, detail, latency)


def failed(query: Query, error: SearchtraceError | None, latency: dict[str, float]) -> QueryOutcome:
    """The journal record of a query whose search raised ``error``: its code and message (what ``eval``,
    ``compare`` and ``gate`` show of it), never an empty ranking scored as one."""
    code = error.code.value if error is not None else ErrorCode.SEARCH_ERROR.value
    message = error.message if error is not None else "the search failed without an error"
    return QueryOutcome(query_id=query.id, category=query.category, latency_ms=latency, error=code,
                        error_message=message)


def outcome_of(ctx: RunContext, query: Query, response: SearchResponse, detail: SearchDetail,
               latency: dict[str, float]) -> QueryOutcome:
    """One query's journal record from its response and detail (``latency``: stage durations, ms)."""
    settings = ctx.settings
    gold = ctx.dataset.qrels.get(query.id, {})
    chunks = response.chunks
    kept = detail.ranking[:settings.results_per_query]
    relevance, bands, features = detail.relevance, detail.bands, np.asarray(detail.features, dtype=np.float64)
    featureless = features.ndim == 2 and features.shape[1] == 0 and len(features) >= len(kept)  # a target's
    results = tuple(
        RankedResult(doc_id=doc, relevance=round(relevance[i], 6), band=bands[i], grade=int(gold.get(doc, 0)),
                     features={} if featureless else dict(zip(FEATURES, map(round, features[i].tolist(), repeat(6)))))
        for i, doc in enumerate(kept))
    ranking = detail.ranking[: settings.depth]
    gold_traces = attribute(query.id, gold, detail.stage_ids, detail.fused_ids, detail.dropped_ids, ranking,
                            settings.attribution_k)
    hints = response.retry_hints
    return QueryOutcome(
        query_id=query.id, category=query.category, latency_ms=latency,
        ranking=tuple(zip(ranking, rounded(detail.ranking_scores[: len(ranking)], 9))),
        results=results, best_score=response.best_score, no_confident=response.no_confident_results,
        bands=tuple(detail.bands[: len(chunks)]), weak=hints is not None,
        retry_hints=hints, kg=response.kg,
        rewrite_terms=response.rewrite_terms, degraded=response.degraded, trace_id=response.trace_id,
        attribution=tuple(gold_traces),
    )


def rounded(values: Sequence[float], digits: int) -> Sequence[float]:
    """``round(v, digits)`` of each value. An integral float is its own rounding (a target's rank-based scores
    are all integral): when every value is one, ``values`` are returned as they are, uncomputed."""
    try:
        if all(map(float.is_integer, values)):
            return values
    except TypeError:  # a value that is not a float: rounded as any other
        pass
    return tuple(map(round, values, repeat(digits)))


def execute(ctx: RunContext, queries: Sequence[Query], progress: bool) -> None:
    """Search the queries not yet journaled, in embedded batches; journal after each batch's traces flush.

    Query vectors come from the retriever's embedding cache, so a repeated eval
    embeds nothing and never loads the model.
    """
    from searchtrace.progress import progress as progress_of

    done = {o.query_id for o in ctx.folder.outcomes() if o.traced}
    for problem in ctx.folder.journal.problems:
        log.warning("%s; that query is searched again", problem.message)
    todo = [q for q in queries if q.id not in done]
    bar = progress_of(len(queries), "eval", "query", bars=progress, initial=len(queries) - len(todo))
    journaled = _search_and_journal(ctx, todo, bar.update)
    bar.close()
    by_id = {q.id: q for q in queries}
    # every query not traced before was searched again just now: its record from this pass is its latest
    untraced = [by_id[o.query_id] for o in journaled if not o.traced and o.query_id in by_id]
    if untraced:  # their traces were not stored (a store locked too long): once more, now
        _search_and_journal(ctx, untraced, lambda n: None)


def _search_and_journal(ctx: RunContext, queries: Sequence[Query],
                        done: Callable[[int], object]) -> list[QueryOutcome]:
    """Search and journal ``queries``; returns their records as journaled."""
    if isinstance(ctx.retriever, Streaming) and ctx.retriever.concurrency > 1:
        return _stream_and_journal(ctx, ctx.retriever, queries, done)
    step, journaled = ctx.settings.batch_size, []
    for start in range(0, len(queries), step):
        batch = store_traces(ctx, search_batch(ctx, queries[start:start + step]))  # traces first: journaled => traced
        ctx.folder.append(batch)
        journaled.extend(batch)
        done(len(batch))
    return journaled


def _stream_and_journal(ctx: RunContext, searcher: Streaming, queries: Sequence[Query],
                        done: Callable[[int], object]) -> list[QueryOutcome]:
    """A target's searches kept ``concurrency`` in flight throughout, journaled ``batch_size`` at a time as
    they are answered (the journal in the order answered; the run's files are written in query order
    whatever the journal's order), so a slow query holds back neither the other searches nor their journaling."""
    requests = [_request(ctx.settings, q.text) for q in queries]
    answered: list[QueryOutcome] = []
    journaled: list[QueryOutcome] = []

    def journal() -> None:
        batch = store_traces(ctx, list(answered))  # traces first: journaled => traced
        ctx.folder.append(batch)
        journaled.extend(batch)
        done(len(batch))
        answered.clear()

    for i, answer in searcher.search_stream(requests, run_id=ctx.run_id, query_ids=[q.id for q in queries]):
        answered.append(_answered(ctx, queries[i], answer))
        if len(answered) >= ctx.settings.batch_size:
            journal()
    if answered:
        journal()
    return journaled


def store_traces(ctx: RunContext, outcomes: list[QueryOutcome]) -> list[QueryOutcome]:
    """Write the batch's spans to the store and mark each outcome traced when all its spans are there.

    Raises:
        OSError: the disk is full (the run stops; started again it resumes where it stopped).
    """
    if ctx.traces is None or ctx.traces.store is None:
        return outcomes
    ctx.traces.flush_store()
    expected = {o.trace_id: len(o.latency_ms) - 1 for o in outcomes if o.trace_id}  # a span per stage, "total"
    try:
        stored = ctx.traces.store.stored(list(expected))
    except BackendUnavailable:  # the shared store out of reach: its exporter holds the spans; nothing to check now
        return outcomes
    out = [_traced(o, stored.get(o.trace_id, -1) >= expected[o.trace_id]) if o.trace_id in expected else o
           for o in outcomes]
    if not all(o.traced for o in out) and ctx.traces.store_failure is FailureKind.DISK_FULL:
        raise OSError(errno.ENOSPC, "no space left for the run's traces", ctx.traces.store.location)
    return out


def _traced(outcome: QueryOutcome, traced: bool) -> QueryOutcome:
    """``outcome`` marked ``traced`` (itself when it already is: a record is never changed in place)."""
    return outcome if outcome.traced is traced else replace(outcome, traced=traced)


def load_for_run(settings: EvalSettings) -> tuple[Dataset, list[Query]]:
    """The dataset and the queries of the run's split.

    A dataset without any qrels (a query set made from traffic) runs every query: its run ranks them for
    ``judge pool``, and its metrics stay empty until labels exist.

    Raises:
        ValidationError: qrels that label none of the queries (a split that cannot be scored).
    """
    dataset = load_dataset(Path(settings.dataset), split=settings.split)
    if dataset.split is None and dataset.queries:  # no labels yet: rank every query, for pooling
        return dataset, list(dataset.queries)
    queries = list(dataset.queries_for_split())
    if not queries:
        raise ValidationError(_nothing_to_score(dataset), field="dataset")
    return dataset, queries


def _nothing_to_score(dataset: Dataset) -> str:
    if dataset.split is None:
        return (f"{dataset.root} has {len(dataset.queries)} queries and no qrels/<split>.tsv: eval needs "
                "labels to score them against")
    return f"{dataset.root}: qrels/{dataset.split}.tsv labels none of its {len(dataset.queries)} queries: nothing to score"
