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

FEATURES = ("dense", "keyword", "graph", "fused", "rank")


def features(fused: Fused, dense_floor: float) -> np.ndarray:
    """Feature matrix (n x 5) of :data:`FEATURES` for every fused candidate.

    ``dense`` is the cosine, imputed with ``dense_floor`` (the lowest cosine the
    dense stage returned) where the dense stage did not retrieve the document;
    ``keyword`` is BM25 over the best BM25 of the query (0 when absent);
    ``graph`` is the graph stage's score (0 when absent); ``fused`` the fused
    score over the best fused score; ``rank`` is 1 / rank in the fused list.
    """
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
    return out


class RelevanceModel(Protocol):
    name: str
    rank_only: bool

    def predict(self, x: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class SimilarityRelevance:
    """Uncalibrated default: a linear ramp of the dense cosine.

    MiniLM cosines of relevant passages mostly lie above ~0.55 and unrelated
    ones below ~0.25; the ramp maps ``lo`` to 0 and ``hi`` to 1.
    """

    lo: float = 0.15
    hi: float = 0.75
    name: str = "similarity"
    rank_only: bool = False

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.clip((x[:, 0] - self.lo) / (self.hi - self.lo), 0.0, 1.0)


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
