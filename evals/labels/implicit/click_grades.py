"""A pair's click evidence as a grade on the dataset's scale: the thresholds, stated once.

* fewer than ``min_impressions`` impressions: no judgment;
* COEC >= ``top``: the scale's highest grade (clicked ``top`` times as often as
  an average result at its positions);
* COEC >= ``relevant``: the scale's ``relevant`` grade;
* else the scale's lowest grade, when the evidence says so: clicked, but less
  than an average result would have been, or never clicked where an average
  result would have drawn ``min_expected`` clicks or more. A pair never clicked
  where little was expected (deep in the lists, shown once) gets no judgment:
  its silence says nothing.

Grades between ``relevant`` and the highest are not used: COEC says how much a
document drew clicks, not how relevant a person would call it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from searchtrace.errors import ValidationError

if TYPE_CHECKING:  # numpy is imported where grades are computed: ``judge implicit --help`` states the defaults
    import numpy as np

    from searchtrace.evals.labels.implicit.coec import PairEvidence
    from searchtrace.evals.labels.judgments.scale import Scale

__all__ = ["ClickThresholds", "click_grades"]


@dataclass(frozen=True)
class ClickThresholds:
    """Where click evidence becomes a grade (see the module docstring).

    Attributes:
        min_impressions: fewest impressions a pair needs to be judged.
        min_expected: fewest expected clicks that make a pair never clicked not relevant.
        relevant: the COEC from which a pair is relevant.
        top: the COEC from which a pair gets the highest grade.
    """

    min_impressions: int = 1
    min_expected: float = 0.5
    relevant: float = 1.0
    top: float = 3.0

    def __post_init__(self) -> None:
        if isinstance(self.min_impressions, bool) or not isinstance(self.min_impressions, int) \
                or self.min_impressions < 1:
            raise ValidationError(f"min_impressions must be a whole number >= 1, got {self.min_impressions!r}",
                                  field="min_impressions")
        if not (self.min_expected > 0 and 0 < self.relevant <= self.top):
            raise ValidationError(f"thresholds need min_expected > 0 and 0 < relevant <= top, got min_expected "
                                  f"{self.min_expected!r}, relevant {self.relevant!r}, top {self.top!r}",
                                  field="thresholds")


def click_grades(evidence: PairEvidence, scale: Scale,
                 thresholds: ClickThresholds = ClickThresholds()) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's grade on ``scale``, and whether its evidence makes a judgment at all (where it does not, the
    grade is meaningless)."""
    import numpy as np

    values = [value for value, _ in scale.grades]
    lowest, highest = min(values), max(values)
    grades = np.where(evidence.coec >= thresholds.top, highest,
                      np.where(evidence.coec >= thresholds.relevant, scale.relevant, lowest))
    silent = (evidence.clicks == 0) & (evidence.expected < thresholds.min_expected)
    return grades, (evidence.impressions >= thresholds.min_impressions) & ~silent
