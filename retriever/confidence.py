"""Relevance (0-1) of fused candidates and their confidence bands.

A relevance model maps per-candidate features to a probability-like relevance.
Without a calibration file the retriever uses :class:`SimilarityRelevance`, a
fixed map of the dense cosine; when no dense score exists (the dense stage was
skipped) only ranks are left and :class:`RankRelevance` is used, which never
claims ``high``. A calibration file written by ``searchtrace calibrate`` loads a
:class:`LogisticRelevance` or :class:`IsotonicRelevance`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from retriever.config import ConfidenceConfig
from retriever.errors import ValidationError
from retriever.types import Band, Fused, Stage

FEATURES = ("dense", "keyword", "graph", "fused", "rank", "coverage", "unknown")


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
    """Feature matrix (n x 7) of :data:`FEATURES` for every fused candidate.

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
    out[:, 0] = dense_floor if dense is None else np.where(np.isnan(dense), dense_floor, dense)
    for col, stage in ((1, Stage.KEYWORD), (2, Stage.GRAPH)):
        comp = fused.components.get(stage)
        if comp is not None and np.any(~np.isnan(comp)):
            filled = np.nan_to_num(comp, nan=0.0)
            top = float(np.max(filled))
            out[:, col] = filled / top if top > 0 else 0.0
    top_fused = float(np.max(fused.scores)) if n else 0.0
    out[:, 3] = fused.scores / top_fused if top_fused > 0 else 0.0
    out[:, 4] = 1.0 / np.arange(1, n + 1)
    keyword = fused.components.get(Stage.KEYWORD)
    if keyword is not None and keyword_max > 0:
        out[:, 5] = np.clip(np.nan_to_num(keyword, nan=0.0) / keyword_max, 0.0, 1.0)
    out[:, 6] = evidence.unknown_share
    return out


class RelevanceModel(Protocol):
    name: str
    rank_only: bool

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
        ramp = np.clip((x[:, 0] - self.lo) / (self.hi - self.lo), 0.0, 1.0)
        return ramp * (1.0 - x[:, 6])


@dataclass(frozen=True)
class RankRelevance:
    """Rank-only fallback: the fused score relative to the best, halved."""

    name: str = "rank"
    rank_only: bool = True

    def predict(self, x: np.ndarray) -> np.ndarray:
        return 0.5 * x[:, 3]


@dataclass(frozen=True)
class LogisticRelevance:
    """``sigmoid(intercept + coef . x[features])``, fitted by the eval harness."""

    coef: tuple[float, ...]
    intercept: float
    feature_names: tuple[str, ...] = FEATURES
    name: str = "logistic"
    rank_only: bool = False

    def predict(self, x: np.ndarray) -> np.ndarray:
        cols = [FEATURES.index(f) for f in self.feature_names]
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
        col = x[:, FEATURES.index(self.feature)]
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


def bands(relevance: np.ndarray, config: ConfidenceConfig, rank_only: bool) -> list[Band]:
    """Band of each relevance; rank-only relevance is capped at ``medium``."""
    out = []
    for r in relevance:
        if r >= config.high and not rank_only:
            out.append(Band.HIGH)
        elif r < config.low:
            out.append(Band.LOW)
        else:
            out.append(Band.MEDIUM)
    return out
