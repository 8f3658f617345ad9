"""Pure builders of span attributes, testable without OpenTelemetry.

Each returns a flat ``dict[str, AttributeValue]``; stage code only opens a span
and calls ``span.set_attributes`` with it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np

from searchtrace.traces.spans import vocabulary as v

AttributeValue = str | bool | int | float | Sequence[str] | Sequence[float] | Sequence[int] | Sequence[bool]

Ids = Sequence[str] | np.ndarray
"""Document ids, best first: a list, or a stage's numpy object array."""

Scores = Sequence[float] | np.ndarray
"""Scores parallel to :data:`Ids`."""


@dataclass(frozen=True)
class CaptureConfig:
    """Privacy switches and recording limits.

    Attributes:
        capture_query: record the query text (``input.value``).
        capture_content: record document text (``document.content``).
        max_candidates: most candidates recorded per stage.
    """

    capture_query: bool = True
    capture_content: bool = False
    max_candidates: int = 100


_SPAN_KIND_ATTRIBUTES: dict[str, dict[str, AttributeValue]] = {
    name: ({v.OPENINFERENCE_SPAN_KIND: v.SPAN_KINDS[name].value} if name in v.SPAN_KINDS else {})
    for name in v.SPAN_NAMES}


def span_kind(name: str) -> dict[str, AttributeValue]:
    """``openinference.span.kind`` of the span named ``name``, if it has one (built once per name; do not mutate)."""
    return _SPAN_KIND_ATTRIBUTES[name]


def candidates(ids: Ids, scores: Scores, capture: CaptureConfig,
               contents: Sequence[str] | None = None) -> dict[str, AttributeValue]:
    """A stage's candidates as two parallel arrays (at most ``max_candidates``) and a count.

    Compact on purpose: setting 2 array attributes costs a few microseconds where
    200 OpenInference ``retrieval.documents.{i}.document.*`` keys cost a millisecond
    on every search. Those keys are derived from these arrays at export time
    (``traces.openinference``), off the search's path.
    """
    n = min(len(ids), capture.max_candidates)
    out: dict[str, AttributeValue] = {
        v.CANDIDATE_COUNT: len(ids),
        v.CANDIDATE_IDS: [str(i) for i in ids[:n]],
        v.CANDIDATE_SCORES: _floats(scores[:n]),
    }
    if capture.capture_content and contents is not None:
        out[v.CANDIDATE_CONTENTS] = [str(c) for c in contents[:n]]
    return out


def _floats(values: Scores) -> list[float]:
    # One numpy call instead of a float() per element: these run for every span on the export thread.
    return np.asarray(values, dtype=np.float64).tolist()


def origin(source: str, dataset: str, index_key: str | None = None, cold: bool | None = None
           ) -> dict[str, AttributeValue]:
    """Root-span attributes saying who called (a :class:`~searchtrace.traces.spans.vocabulary.Source` value),
    which dataset was searched (its folder name) and in which index (its key), and whether the search is
    its process's first after the model loaded."""
    out: dict[str, AttributeValue] = {v.SOURCE: source, v.DATASET: dataset}
    if index_key is not None:
        out[v.INDEX_KEY] = index_key
    if cold is not None:
        out[v.SEARCH_COLD] = cold
    return out


def request(query: str, mode: str, top_k: int, candidates_: int, depth: int, capture: CaptureConfig) -> dict[str, AttributeValue]:
    """Root-span attributes describing the request."""
    out: dict[str, AttributeValue] = {
        v.MODE: mode,
        v.TOP_K: top_k,
        v.CANDIDATES: candidates_,
        v.DEPTH: depth,
    }
    if capture.capture_query:
        out[v.INPUT_VALUE] = query
    return out


def refused_query(query: str | None, capture: CaptureConfig) -> dict[str, AttributeValue]:
    """Root-span attributes of a request refused before :func:`request` recorded it: its query, when the query
    itself was valid (another field was not) and queries are captured; else none."""
    return {v.INPUT_VALUE: query} if query is not None and capture.capture_query else {}


def rewrite(entities: Iterable[str], terms: Iterable[str]) -> dict[str, AttributeValue]:
    return {v.DETECTED_ENTITIES: list(entities), v.REWRITE_TERMS: list(terms)}


def fusion(method: str, k0: int, weights: Mapping[str, float]) -> dict[str, AttributeValue]:
    return {
        v.FUSION_METHOD: method,
        v.FUSION_K0: k0,
        v.FUSION_WEIGHTS: [f"{k}={w:g}" for k, w in sorted(weights.items())],
    }


def rerank(name: str, top_k: int, in_ids: Ids, in_scores: Scores, out_ids: Ids,
           out_scores: Scores, capture: CaptureConfig) -> dict[str, AttributeValue]:
    """The reranker's input and output lists, compact like :func:`candidates`."""
    n = capture.max_candidates
    return {
        v.RERANKER_MODEL_NAME: name,
        v.RERANKER_TOP_K: top_k,
        v.RERANK_INPUT_IDS: [str(i) for i in in_ids[:n]],
        v.RERANK_INPUT_SCORES: _floats(in_scores[:n]),
        v.RERANK_OUTPUT_IDS: [str(i) for i in out_ids[:n]],
        v.RERANK_OUTPUT_SCORES: _floats(out_scores[:n]),
    }


def filtered(applied: Sequence[str], dropped: Sequence[str], capture: CaptureConfig) -> dict[str, AttributeValue]:
    return {v.FILTER_APPLIED: list(applied), v.FILTER_DROPPED_IDS: [str(d) for d in dropped[: capture.max_candidates]]}


RetryValues = tuple[Sequence[str], Sequence[str], str, str]
"""A response's retry hints: detected entities, related terms, the narrower and the broader query."""

RelationValues = tuple[str, str, str, str]
"""A relation hit returned: its id, subject, relation and object."""


def outcome(ids: Sequence[str], bands: Sequence[str], relevance: Sequence[float], best_score: float,
            no_confident: bool, degraded: Sequence[str], hints: RetryValues | None,
            titles: Sequence[str] | None = None, relations: Sequence[RelationValues] = ()
            ) -> dict[str, AttributeValue]:
    """Root-span attributes of a search's answer: its results' ids, bands, relevance and titles, the
    triples of its relation hits, best score, hints."""
    out: dict[str, AttributeValue] = {
        v.RESULT_IDS: list(ids),
        v.RESULT_BANDS: list(bands),
        v.RESULT_RELEVANCE: list(relevance),
        v.BEST_SCORE: float(best_score),
        v.NO_CONFIDENT_RESULTS: bool(no_confident),
        v.DEGRADED: list(degraded),
        v.OUTPUT_VALUE: json.dumps({"n_results": len(ids), "bestScore": best_score}),
    }
    if titles is not None:
        out[v.RESULT_TITLES] = list(titles)
    if relations:
        for key, i in ((v.RELATION_IDS, 0), (v.RELATION_SUBJECTS, 1), (v.RELATION_PREDICATES, 2),
                       (v.RELATION_OBJECTS, 3)):
            out[key] = [r[i] for r in relations]
    if hints is not None:
        entities, terms, narrower, broader = hints
        out[v.RETRY_DETECTED_ENTITIES] = list(entities)
        out[v.RETRY_RELATED_TERMS] = list(terms)
        out[v.RETRY_NARROWER] = narrower or ""
        out[v.RETRY_BROADER] = broader or ""
    return out


def eval_context(run_id: str | None, query_id: str | None) -> dict[str, AttributeValue]:
    out: dict[str, AttributeValue] = {}
    if run_id:
        out[v.RUN_ID] = run_id
    if query_id:
        out[v.QUERY_ID] = query_id
    return out


def fetch(dataset: str, ids: Sequence[str], follows: str | None) -> dict[str, AttributeValue]:
    """A served fetch's server-span attributes: the dataset read, the ids fetched in order, and the trace id
    of the search it follows when the caller named one."""
    out: dict[str, AttributeValue] = {v.DATASET: dataset, v.FETCH_IDS: [str(i) for i in ids]}
    if follows:
        out[v.FETCH_OF] = follows
    return out


def session(session_id: str | None) -> dict[str, AttributeValue]:
    """An MCP tool call's session attribute (nothing when the call has no session)."""
    return {v.MCP_SESSION_ID: session_id} if session_id else {}
