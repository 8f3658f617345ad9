"""Relevance (0-1) of fused candidates and their confidence bands.

A relevance model maps per-candidate features to a probability-like relevance.
Without a calibration file the retriever uses :class:`SimilarityRelevance`, a
fixed map of the dense cosine; when no dense score exists (the dense stage was
skipped) only ranks are left and :class:`RankRelevance` is used, which never
claims ``high``. A calibration file written by ``searchtrace calibrate`` loads a
:class:`LogisticRelevance` or :class:`IsotonicRelevance`.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Protocol

import numpy as np

from searchtrace.errors import ValidationError
from searchtrace.names import Band, Stage
from searchtrace.retriever.config.model import ConfidenceConfig
from searchtrace.retriever.types import Fused


class Feature(str, enum.Enum):
    """A relevance-model feature; the member order is the column order of :func:`features`.

    Models address columns by feature (``x[:, Feature.DENSE.column]``), never by
    number, and calibration files and ``results.parquet`` name them by value.
    """

    DENSE = "dense"
    KEYWORD = "keyword"
    GRAPH = "graph"
    FUSED = "fused"
    RANK = "rank"
    COVERAGE = "coverage"
    UNKNOWN = "unknown"

    @property
    def column(self) -> int:
        """This feature's column in a feature matrix."""
        return _COLUMN[self]


_COLUMN: dict[Feature, int] = {f: i for i, f in enumerate(Feature)}

FEATURES: tuple[str, ...] = tuple(f.value for f in Feature)
"""Feature names in column order."""


@dataclass(frozen=True)
class QueryEvidence:
    """Query-level facts the features need.

    Attributes:
        dense_floor: lowest cosine the dense stage returned (imputed where it missed).
        keyword_max: largest BM25 score any document could reach for the query.
        unknown_share: IDF-weighted share of query terms no document contains.
    """

    dense_floor: float = 0.0
    keyword_max: float = 0.0
    unknown_share: float = 0.0


def features(fused: Fused, evidence: QueryEvidence) -> np.ndarray:
    """Feature matrix (n x len(Feature)), columns in :class:`Feature` order, for every fused candidate.

    ``dense`` is the cosine, imputed with ``dense_floor`` (the lowest cosine the
    dense stage returned) where the dense stage did not retrieve the document;
    ``keyword`` is BM25 over the best BM25 of the query (0 when absent);
    ``graph`` is the graph stage's score (0 when absent); ``fused`` the fused
    score over the best fused score; ``rank`` is 1 / rank in the fused list;
    ``coverage`` is BM25 over the largest BM25 any document could reach for the
    query (``keyword_max``, see ``TermStats.max_score``): an absolute, IDF-weighted
    share of the query that the document matches; ``unknown`` (the same for every
    candidate) is the IDF-weighted share of query terms the corpus never saw.
    """
    dense_floor, keyword_max = evidence.dense_floor, evidence.keyword_max
    n = len(fused)
    out = np.zeros((n, len(FEATURES)))
    if n == 0:
        return out
    dense = fused.components.get(Stage.DENSE)
    out[:, Feature.DENSE.column] = dense_floor if dense is None else np.where(np.isnan(dense), dense_floor, dense)
    for feature, stage in ((Feature.KEYWORD, Stage.KEYWORD), (Feature.GRAPH, Stage.GRAPH)):
        comp = fused.components.get(stage)
        if comp is not None and np.any(~np.isnan(comp)):
            filled = np.nan_to_num(comp, nan=0.0)
            top = float(np.max(filled))
            out[:, feature.column] = filled / top if top > 0 else 0.0
    top_fused = float(np.max(fused.scores)) if n else 0.0
    out[:, Feature.FUSED.column] = fused.scores / top_fused if top_fused > 0 else 0.0
    out[:, Feature.RANK.column] = 1.0 / np.arange(1, n + 1)
    keyword = fused.components.get(Stage.KEYWORD)
    if keyword is not None and keyword_max > 0:
        out[:, Feature.COVERAGE.column] = np.clip(np.nan_to_num(keyword, nan=0.0) / keyword_max, 0.0, 1.0)
    out[:, Feature.UNKNOWN.column] = evidence.unknown_share
    return out


class RelevanceModel(Protocol):
    """Maps feature rows (columns in :class:`Feature` order) to relevance in 0-1."""

    @property
    def name(self) -> str:
        """How relevance is computed: similarity, rank, logistic or isotonic."""
        ...

    @property
    def rank_only(self) -> bool:
        """True when relevance rests on ranks alone (it then never claims ``high``)."""
        ...

    def predict(self, x: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class SimilarityRelevance:
    """Uncalibrated default: a linear ramp of the dense cosine, discounted by unknown terms.

    ``clip((cos - lo) / (hi - lo), 0, 1) * (1 - unknown)``: MiniLM cosines of
    relevant passages mostly lie above ~0.5 and unrelated ones below ~0.25; a
    query whose distinctive terms the corpus has never seen (an entity it does
    not know) cannot be answered confidently, however close its topic.
    """

    lo: float = 0.15
    hi: float = 0.75
    name: str = "similarity"
    rank_only: bool = False

    def predict(self, x: np.ndarray) -> np.ndarray:
        ramp = np.clip((x[:, Feature.DENSE.column] - self.lo) / (self.hi - self.lo), 0.0, 1.0)
        return ramp * (1.0 - x[:, Feature.UNKNOWN.column])


@dataclass(frozen=True)
class RankRelevance:
    """Rank-only fallback: the fused score relative to the best, halved."""

    name: str = "rank"
    rank_only: bool = True

    def predict(self, x: np.ndarray) -> np.ndarray:
        return 0.5 * x[:, Feature.FUSED.column]


@dataclass(frozen=True)
class LogisticRelevance:
    """``sigmoid(intercept + coef . x[features])``, fitted by the eval harness."""

    coef: tuple[float, ...]
    intercept: float
    feature_names: tuple[str, ...] = FEATURES
    name: str = "logistic"
    rank_only: bool = False

    def predict(self, x: np.ndarray) -> np.ndarray:
        cols = [Feature(f).column for f in self.feature_names]
        z = self.intercept + x[:, cols] @ np.asarray(self.coef)
        return 1.0 / (1.0 + np.exp(-z))


@dataclass(frozen=True)
class IsotonicRelevance:
    """Piecewise-linear isotonic map of one feature (``x_points`` ascending)."""

    feature: str
    x_points: tuple[float, ...]
    y_points: tuple[float, ...]
    name: str = "isotonic"
    rank_only: bool = False

    def predict(self, x: np.ndarray) -> np.ndarray:
        col = x[:, Feature(self.feature).column]
        return np.interp(col, self.x_points, self.y_points)


def load_calibration(path: Path) -> RelevanceModel:
    """Load a calibration file; errors name the file and what is wrong."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValidationError(f"{path}: cannot read calibration file: {exc}", field="calibration") from None
    kind = data.get("kind") if isinstance(data, dict) else None
    try:
        if kind == "logistic":
            names = tuple(data.get("features", FEATURES))
            unknown = [f for f in names if f not in FEATURES]
            if unknown or len(names) != len(data["coef"]):
                raise ValueError(f"features {unknown or names} do not match coef; allowed: {FEATURES}")
            return LogisticRelevance(tuple(map(float, data["coef"])), float(data["intercept"]), names)
        if kind == "isotonic":
            if data["feature"] not in FEATURES:
                raise ValueError(f"unknown feature {data['feature']!r}; allowed: {FEATURES}")
            return IsotonicRelevance(data["feature"], tuple(map(float, data["x"])), tuple(map(float, data["y"])))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValidationError(f"{path}: malformed {kind} calibration: {exc}", field="calibration") from None
    raise ValidationError(f"{path}: 'kind' must be 'logistic' or 'isotonic', got {kind!r}", field="calibration")


def band_of(relevance: float, config: ConfidenceConfig, rank_only: bool = False) -> Band:
    """The confidence band of one relevance: the only place thresholds become bands.

    ``high`` at or above ``config.high``, ``low`` below ``config.low``, else
    ``medium``; relevance known from ranks alone (``rank_only``) is capped at
    ``medium``, since it says nothing about how relevant the best result is.
    """
    if relevance >= config.high and not rank_only:
        return Band.HIGH
    if relevance < config.low:
        return Band.LOW
    return Band.MEDIUM


def bands(relevance: Iterable[float], config: ConfidenceConfig, rank_only: bool = False) -> list[Band]:
    """:func:`band_of` of each relevance."""
    return [band_of(float(r), config, rank_only) for r in relevance]
