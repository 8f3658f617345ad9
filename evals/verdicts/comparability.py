"""Whether two runs can be compared: the same queries, the same labels, queries in common, the same depth.

``compare`` and ``gate`` check this before any statistic: a comparison of runs
scored on different queries or labels would pass (or fail) a retriever change
for something else. :func:`check` reads each run's ``dataset.fingerprints``
(run format 3) and the query ids each side scored; :meth:`Comparability.require`
raises when the runs cannot be compared, naming every reason.

Runs scored to different depths (``RunSummary.depth``: a target that answers
fewer results, a smaller ``--depth``) compare only on the metrics the depths do
not change: those with a cutoff within the shallower depth. A metric without a
cutoff (``map``, ``recall``, ``rprec``) or cut deeper is depth-bound
(:meth:`Comparability.depth_bound`): ``gate`` refuses a rule on one
(:meth:`Comparability.require_depth`), ``compare`` shows it without significance.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from searchtrace.errors import ValidationError
from searchtrace.evals.runs.runfolder import RunSummary
from searchtrace.evals.scoring.metrics import Metric, parse_metrics

__all__ = ["ALLOW_LABEL_CHANGE", "NO_LABELS", "Comparability", "check", "depth_changes", "labelled"]

ALLOW_LABEL_CHANGE = "--allow-label-change"
"""The flag that lets a deliberate change of the qrels through (the report then says so)."""

NO_LABELS = "--no-labels"
"""The flag that compares two runs by their rankings alone (rank-biased overlap), labels or not."""


def labelled(summary: RunSummary) -> bool:
    """Whether a run was scored against labels: some of its queries were judged (a dataset without qrels, a
    query set from traffic before judging, scores none). An external run's labels are its ``--qrels``."""
    return summary.evaluated_queries > 0


@dataclass(frozen=True)
class Comparability:
    """What two runs have in common, and why they cannot be compared (if they cannot).

    Attributes:
        shared: query ids scored on both sides.
        only_in_base, only_in_candidate: query ids scored on one side only.
        refusals: every reason the runs cannot be compared (empty: they can).
        notes: what a reader of the comparison should know (a label change let through, unknown fingerprints).
        depths: the depths each side was scored to (base, candidate).
    """

    shared: int
    only_in_base: int
    only_in_candidate: int
    refusals: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    depths: tuple[int, int] | None = None

    def depth_bound(self, metrics: Iterable[Metric | str]) -> tuple[Metric, ...]:
        """Of ``metrics``, those the two runs' different depths change (none when the depths are equal)."""
        if self.depths is None or self.depths[0] == self.depths[1]:
            return ()
        return tuple(m for m in parse_metrics(metrics) if depth_changes(m, min(self.depths)))

    def depth_note(self, metrics: Iterable[Metric | str]) -> str | None:
        """``depth 100 (base) vs 50 (candidate): no p-values for map``, when the depths change a metric."""
        bound = self.depth_bound(metrics)
        return f"{self._depths}: no p-values for {', '.join(map(str, bound))}" if bound else None

    def require_depth(self, metrics: Iterable[Metric | str]) -> None:
        """Raise when any of ``metrics`` is changed by the runs' different depths.

        Raises:
            ValidationError: naming both depths and the metrics (exit code 2).
        """
        bound = self.depth_bound(metrics)
        if bound:
            raise ValidationError(f"{', '.join(map(str, bound))} not comparable: {self._depths}", field="runs")

    @property
    def _depths(self) -> str:
        base, candidate = self.depths or (0, 0)
        return f"depth {base} (base) vs {candidate} (candidate)"

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


def depth_changes(metric: Metric, depth: int) -> bool:
    """Whether scoring rankings cut at ``depth`` can change ``metric``: no cutoff, or one deeper."""
    return metric.k is None or metric.k > depth


def check(base: RunSummary, candidate: RunSummary, base_ids: Iterable[str], candidate_ids: Iterable[str], *,
          allow_label_change: bool = False, labels: bool = True) -> Comparability:
    """Compare what two runs scored (``*_ids``: the query ids each side scored); without ``labels`` (a
    comparison of the rankings alone) the qrels are not checked."""
    b, c = set(base_ids), set(candidate_ids)
    refusals: list[str] = []
    notes: list[str] = []
    if not b & c:
        refusals.append("no query in common (different datasets or splits?)")
    fb, fc = base.dataset.fingerprints, candidate.dataset.fingerprints
    if fb is None or fc is None:
        older = ", ".join(f"{side} (run {s.run_id})" for side, s, f in (("base", base, fb), ("candidate", candidate, fc))
                          if f is None)
        checked = "queries and labels" if labels else "queries"
        notes.append(f"{checked} not checked: no fingerprints in {older}; evaluate it again to check them")
    else:
        if fb.queries != fc.queries:
            refusals.append("the queries differ (queries.jsonl ids or texts); evaluate both on the same queries")
        if labels and fb.qrels != fc.qrels:
            if allow_label_change:
                notes.append(f"the qrels differ: a label change, allowed by {ALLOW_LABEL_CHANGE}")
            else:
                refusals.append(f"the qrels differ (a label change passes for a retriever change); "
                                f"pass {ALLOW_LABEL_CHANGE} if it is deliberate")
        if fb.corpus != fc.corpus:
            notes.append("the corpus differs (corpus.jsonl)")
    return Comparability(len(b & c), len(b - c), len(c - b), tuple(refusals), tuple(notes),
                         (base.depth, candidate.depth))
