"""The JSON boundary: the search response, described as TypedDicts."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict


class Metadata(TypedDict):
    title: str
    url: str
    language: str
    timestamp: str
    tags: list[str]
    collection: str


class ScoreComponents(TypedDict):
    dense: float | None
    keyword: float | None
    graph: float | None
    fused: float | None


class Result(TypedDict):
    id: str
    content: str
    score: float
    confidenceBand: Literal["high", "medium", "low"]
    component_type: Literal["chunk", "relation"]
    metadata: Metadata
    subject: NotRequired[str]
    relation: NotRequired[str]
    object: NotRequired[str]
    score_components: NotRequired[ScoreComponents]
    ranks: NotRequired[dict[str, int | None]]


class KgTriple(TypedDict):
    subject: str
    relation: str
    object: str
    doc_id: str


class RetryHints(TypedDict):
    detectedEntities: list[str]
    relatedTerms: list[str]
    narrowerQuery: str
    broaderQuery: str


class SearchResponse(TypedDict):
    results: list[Result]
    kg: list[KgTriple]
    rewrite_terms: list[str]
    bestScore: float
    noConfidentResults: bool
    retryHints: RetryHints | None
    traceId: str
    mode: Literal["fast", "graph"]
    degraded: list[str]


class ErrorBody(TypedDict):
    code: str
    message: str
    field: str | None


class ErrorResponse(TypedDict):
    error: ErrorBody
