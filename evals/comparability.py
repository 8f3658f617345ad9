"""Whether two runs can be compared: the same queries, the same labels, and queries in common.

``compare`` and ``gate`` check this before any statistic: a comparison of runs
scored on different queries or labels would pass (or fail) a retriever change
for something else. :func:`check` reads each run's ``dataset.fingerprints``
(run format 3) and the query ids each side scored; :meth:`Comparability.require`
raises when the runs cannot be compared, naming every reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from searchtrace.errors import ValidationError
from searchtrace.evals.runfolder import RunSummary

__all__ = ["ALLOW_LABEL_CHANGE", "Comparability", "check"]

ALLOW_LABEL_CHANGE = "--allow-label-change"
"""The flag that lets a deliberate change of the qrels through (the report then says so)."""


@dataclass(frozen=True)
class Comparability:
    """What two runs have in common, and why they cannot be compared (if they cannot).

    Attributes:
        shared: query ids scored on both sides.
        only_in_base, only_in_candidate: query ids scored on one side only.
        refusals: every reason the runs cannot be compared (empty: they can).
        notes: what a reader of the comparison should know (a label change let through, unknown fingerprints).
    """

    shared: int
    only_in_base: int
    only_in_candidate: int
    refusals: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def counts(self) -> str:
        """``"100 shared queries (0 only in base, 0 only in candidate)"``."""
        return (f"{self.shared} shared queries ({self.only_in_base} only in base, "
                f"{self.only_in_candidate} only in candidate)")

    def require(self) -> None:
        """Raise when the runs cannot be compared.

        Raises:
            ValidationError: every reason, in one message (exit code 2).
        """
        if self.refusals:
            raise ValidationError("the runs cannot be compared: " + "; ".join(self.refusals)
                                  + f" ({self.counts})", field="runs")


def check(base: RunSummary, candidate: RunSummary, base_ids: Iterable[str], candidate_ids: Iterable[str], *,
          allow_label_change: bool = False) -> Comparability:
    """Compare what two runs scored (``*_ids``: the query ids each side scored)."""
    b, c = set(base_ids), set(candidate_ids)
    refusals: list[str] = []
    notes: list[str] = []
    if not b & c:
        refusals.append("no query in common (different datasets or splits?)")
    fb, fc = base.dataset.fingerprints, candidate.dataset.fingerprints
    if fb is None or fc is None:
        older = ", ".join(f"{side} (run {s.run_id})" for side, s, f in (("base", base, fb), ("candidate", candidate, fc))
                          if f is None)
        notes.append(f"queries and labels not checked: no fingerprints in {older}; evaluate it again to check them")
    else:
        if fb.queries != fc.queries:
            refusals.append("the queries differ (queries.jsonl ids or texts); evaluate both on the same queries")
        if fb.qrels != fc.qrels:
            if allow_label_change:
                notes.append(f"the qrels differ: a label change, allowed by {ALLOW_LABEL_CHANGE}")
            else:
                refusals.append(f"the qrels differ (a label change passes for a retriever change); "
                                f"pass {ALLOW_LABEL_CHANGE} if it is deliberate")
        if fb.corpus != fc.corpus:
            notes.append("the corpus differs (corpus.jsonl)")
    return Comparability(len(b & c), len(b - c), len(c - b), tuple(refusals), tuple(notes))
