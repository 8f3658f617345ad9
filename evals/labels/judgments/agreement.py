"""How far judges agree, on the pairs two or more of them label.

Two judges: Cohen's kappa on the pairs both label. Three or more: Fleiss' kappa
(each pair with however many judges label it) and Krippendorff's alpha
(ordinal: a 2 against a 0 disagrees more than a 2 against a 1), both over
every pair two or more label. The statistics are :mod:`searchtrace.evals.scoring.stats.agreement`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from searchtrace.evals.labels.judgments.labels import PairLabels
from searchtrace.evals.scoring.stats.agreement import Level, cohen_kappa, fleiss_kappa, krippendorff_alpha

__all__ = ["Agreement", "measure_agreement"]


@dataclass(frozen=True)
class Agreement:
    """Agreement among the judges of some labels.

    Attributes:
        judges: every judge with a label.
        shared: the pairs two or more judges label.
        cohen: Cohen's kappa (exactly two judges), else None.
        fleiss: Fleiss' kappa (three judges or more), else None.
        alpha: Krippendorff's ordinal alpha (three judges or more), else None.
    """

    judges: tuple[str, ...]
    shared: tuple[PairLabels, ...]
    cohen: float | None = None
    fleiss: float | None = None
    alpha: float | None = None

    @property
    def disputed(self) -> tuple[PairLabels, ...]:
        """The shared pairs whose judges give different grades."""
        return tuple(p for p in self.shared if p.disputed)


def measure_agreement(labels: Sequence[PairLabels]) -> Agreement:
    """The agreement of ``labels``' judges on the pairs several label (no statistic when none do)."""
    judges = tuple(sorted({judge for p in labels for judge in p.judges}))
    shared = tuple(p for p in labels if len(p.grades) >= 2)
    if not shared:
        return Agreement(judges, shared)
    matrix = _matrix(judges, shared)
    if len(judges) == 2:
        both = ~np.isnan(matrix).any(0)
        return Agreement(judges, shared, cohen=cohen_kappa(matrix[0, both], matrix[1, both]))
    return Agreement(judges, shared, fleiss=fleiss_kappa(_counts(shared)),
                     alpha=krippendorff_alpha(matrix, Level.ORDINAL))


def _matrix(judges: tuple[str, ...], pairs: Sequence[PairLabels]) -> np.ndarray:
    """judges x pairs grades, NaN where a judge has no label."""
    row = {judge: i for i, judge in enumerate(judges)}
    matrix = np.full((len(judges), len(pairs)), np.nan)
    for column, p in enumerate(pairs):
        for judge, grade in p.grades:
            matrix[row[judge], column] = grade
    return matrix


def _counts(pairs: Sequence[PairLabels]) -> np.ndarray:
    """pairs x grades: how many judges give each grade."""
    grades = sorted({g for p in pairs for _, g in p.grades})
    column = {g: i for i, g in enumerate(grades)}
    counts = np.zeros((len(pairs), len(grades)))
    for i, p in enumerate(pairs):
        for _, grade in p.grades:
            counts[i, column[grade]] += 1
    return counts
