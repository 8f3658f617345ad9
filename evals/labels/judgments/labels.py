"""The labels standing in a store: each judge's latest judgment of each pair, and one grade per pair.

A judge's later judgment of a pair supersedes their earlier one, by the order
of the store (not by the clocks of the machines that wrote them); one without
a grade retracts it, leaving the judge no label of the pair. Several judges'
labels of a pair make one grade by majority, a tie going to the lower grade.

An adjudication settles a pair its judges disagree on: a human judgment whose
note starts with :data:`ADJUDICATION`, by whoever adjudicates. It is one more
label of the pair (for two judges who disagree, the deciding one); the
dashboard's Disagreements view lists a pair as adjudicated once it has one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from searchtrace.evals.labels.judgments.records import Judgment, Kind, Pair

__all__ = ["ADJUDICATION", "PairLabels", "adjudicates", "majority", "pair_labels", "standing"]

ADJUDICATION = "adjudication"
"""How the note of an adjudicating judgment starts."""


def adjudicates(judgment: Judgment) -> bool:
    """``judgment`` settles a disagreement (a human grade whose note starts with :data:`ADJUDICATION`)."""
    return (judgment.kind is Kind.HUMAN and judgment.grade is not None
            and (judgment.note or "").startswith(ADJUDICATION))


def standing(judgments: Iterable[Judgment]) -> dict[tuple[Pair, str], Judgment]:
    """Each (pair, judge)'s latest judgment, retractions removed."""
    latest: dict[tuple[Pair, str], Judgment] = {}
    for judgment in judgments:
        latest[(judgment.pair, judgment.judge)] = judgment
    return {key: j for key, j in latest.items() if not j.retracts}


def majority(grades: Iterable[int]) -> int:
    """The grade most labels give; of grades given equally often, the lowest."""
    counts = Counter(grades)
    if not counts:
        raise ValueError("majority of no grades")
    top = max(counts.values())
    return min(grade for grade, count in counts.items() if count == top)


@dataclass(frozen=True)
class PairLabels:
    """The standing labels of one pair.

    Attributes:
        pair: (query_id, doc_id).
        grades: (judge, grade) of each judge who labels it, by judge.
    """

    pair: Pair
    grades: tuple[tuple[str, int], ...]

    @property
    def grade(self) -> int:
        """The pair's one grade: the majority, a tie to the lower."""
        return majority(g for _, g in self.grades)

    @property
    def judges(self) -> tuple[str, ...]:
        return tuple(judge for judge, _ in self.grades)

    @property
    def disputed(self) -> bool:
        """Its judges do not all give the same grade."""
        return len({g for _, g in self.grades}) > 1


def pair_labels(judgments: Iterable[Judgment], kinds: Collection[Kind] = tuple(Kind),
                judge: str | None = None) -> tuple[PairLabels, ...]:
    """Every labelled pair, sorted, from the standing judgments of these kinds (and this judge only, if given)."""
    by_pair: dict[Pair, list[tuple[str, int]]] = {}
    for (pair, who), j in standing(judgments).items():
        if j.kind in kinds and (judge is None or who == judge) and j.grade is not None:
            by_pair.setdefault(pair, []).append((who, j.grade))
    return tuple(PairLabels(pair, tuple(sorted(grades))) for pair, grades in sorted(by_pair.items()))
