"""What implicit judgments are compared with, and how far they agree.

The reference is the dataset's standing human and imported labels (one grade
per pair: the majority, a tie to the lower), or qrels files given by name, read
as benchmarks mean them: a document a listed query's qrels do not name is not
relevant (the scale's lowest grade). Agreement is measured on the pairs both
grade: Cohen's kappa on the grades, on relevant or not (the scale's
``relevant`` grade and above), Krippendorff's ordinal alpha, and the confusion
of grades (:mod:`searchtrace.evals.scoring.stats.agreement`'s statistics, the judges'
agreement code).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from searchtrace.evals.labels.judgments.agreement import measure_agreement
from searchtrace.evals.labels.judgments.labels import PairLabels, pair_labels
from searchtrace.evals.labels.judgments.records import Judgment, Kind, Pair
from searchtrace.evals.labels.judgments.scale import Scale
from searchtrace.evals.runs.trec import qrels_lines
from searchtrace.evals.scoring.stats.agreement import Level, cohen_kappa, krippendorff_alpha

__all__ = ["Reference", "ReferenceAgreement", "agreement_with", "qrels_reference", "store_reference"]


@dataclass(frozen=True)
class Reference:
    """Reference grades of pairs.

    Attributes:
        source: what they are, for a person.
        labels: the grade of each pair listed.
        complete: queries whose unlisted documents have the grade ``unlisted`` (a qrels file's).
        unlisted: that grade.
    """

    source: str
    labels: Mapping[Pair, int]
    complete: frozenset[str] = frozenset()
    unlisted: int = 0

    def grade(self, pair: Pair) -> int | None:
        """The pair's reference grade; None when the reference says nothing of it."""
        listed = self.labels.get(pair)
        if listed is not None:
            return listed
        return self.unlisted if pair[0] in self.complete else None


def store_reference(judgments: Iterable[Judgment], location: str) -> Reference:
    """The standing human and imported labels of a store, one grade per pair."""
    labels = pair_labels(judgments, (Kind.HUMAN, Kind.IMPORTED))
    return Reference(f"human and imported labels in {Path(location).name}", {p.pair: p.grade for p in labels})


def qrels_reference(paths: Sequence[Path], scale: Scale) -> Reference:
    """The labels of qrels files (TREC or BEIR); a query they list has every other document at the lowest grade.

    Raises:
        DataError: a malformed line, naming its file and line.
    """
    labels: dict[Pair, int] = {}
    for path in paths:
        for _, query_id, doc_id, grade in qrels_lines(path):
            labels[(query_id, doc_id)] = grade
    lowest = min(value for value, _ in scale.grades)
    names = ", ".join(str(p) for p in paths)
    return Reference(f"qrels {names}", labels, frozenset(q for q, _ in labels), lowest)


@dataclass(frozen=True)
class ReferenceAgreement:
    """Implicit grades against reference grades, on the pairs both grade.

    Attributes:
        reference: what the reference is.
        pairs: how many pairs both grade.
        grades: the grades of the confusion's rows and columns, lowest first.
        confusion: rows the reference's grade, columns the implicit one: how many pairs.
        cohen: Cohen's kappa on the grades (None when undefined: fewer than two pairs, one grade throughout).
        binary: Cohen's kappa on relevant or not.
        alpha: Krippendorff's ordinal alpha.
    """

    reference: str
    pairs: int
    grades: tuple[int, ...]
    confusion: tuple[tuple[int, ...], ...]
    cohen: float | None
    binary: float | None
    alpha: float | None

    def to_json(self) -> dict[str, Any]:
        return {"reference": self.reference, "pairs": self.pairs, "grades": list(self.grades),
                "confusion": [list(row) for row in self.confusion], "cohen_kappa": self.cohen,
                "binary_kappa": self.binary, "krippendorff_alpha": self.alpha}


def _defined(value: float | None) -> float | None:
    return None if value is None or value != value else float(value)


def agreement_with(implicit: Mapping[Pair, int], reference: Reference, scale: Scale) -> ReferenceAgreement:
    """How far ``implicit`` grades agree with ``reference``'s on the pairs both grade."""
    both = [(pair, grade, ref) for pair, grade in sorted(implicit.items())
            if (ref := reference.grade(pair)) is not None]
    ours = np.array([g for _, g, _ in both], dtype=np.float64)
    theirs = np.array([r for _, _, r in both], dtype=np.float64)
    grades = tuple(sorted({value for value, _ in scale.grades} | {int(x) for x in np.r_[ours, theirs]}))
    index = {g: i for i, g in enumerate(grades)}
    table = np.zeros((len(grades), len(grades)), dtype=np.int64)
    for _, grade, ref in both:
        table[index[ref], index[grade]] += 1
    labels = [PairLabels(pair, (("implicit", grade), ("reference", ref))) for pair, grade, ref in both]
    cohen = measure_agreement(labels).cohen if labels else None
    binary = cohen_kappa(ours >= scale.relevant, theirs >= scale.relevant) if both else None
    alpha = krippendorff_alpha(np.vstack([ours, theirs]), Level.ORDINAL) if both else None
    return ReferenceAgreement(reference.source, len(both), grades, tuple(tuple(int(x) for x in row) for row in table),
                              _defined(cohen), _defined(binary), _defined(alpha))
