"""Failed queries in a comparison: said for both runs, and a candidate with any refused by the gate.

A query whose target failed has no ranking; its run's metrics are over the queries that
answered (``run.json`` lists the failed ones). Two runs compared over different answered
queries are not the same test: ``compare`` says how many failed on each side, and ``gate``
refuses a candidate with failed queries (invalid input, exit 2, never a regression) unless
``--allow-failed N`` lets up to N through; a baseline's failures are said, not refused.
"""

from __future__ import annotations

from searchtrace.errors import ValidationError
from searchtrace.evals.runs.runfolder import RunSummary
from searchtrace.evals.scoring.metrics import Evaluation
from searchtrace.terminal import fit

__all__ = ["SHOWN", "answered_by_both", "failed_lines", "failed_notes", "require_answered"]

SHOWN = 5
"""How many failed queries are shown with their errors (every one is named)."""


def _count(summary: RunSummary) -> str:
    n = summary.errors
    return f"{n} failed {'query' if n == 1 else 'queries'}"


def answered_by_both(base: Evaluation, candidate: Evaluation, *runs: RunSummary) -> tuple[Evaluation, Evaluation]:
    """Both evaluations without the queries either run failed: a comparison pairs queries, and a query missing
    from one side would count as 0 there, a failure scored as a bad ranking."""
    failed = {q.query_id for s in runs for q in s.failed}
    if not failed:
        return base, candidate
    return tuple(_without(ev, failed) for ev in (base, candidate))  # type: ignore[return-value]


def _without(ev: Evaluation, failed: set[str]) -> Evaluation:
    keep = [i for i, q in enumerate(ev.query_ids.tolist()) if q not in failed]
    return Evaluation.from_arrays([ev.query_ids[i] for i in keep], {m: ev.per_query[m][keep] for m in ev.metrics})


def failed_notes(base: RunSummary, candidate: RunSummary) -> list[str]:
    """One note per run with failed queries (none when both answered every query)."""
    return [f"the {side} has {_count(s)} of {s.dataset.queries}: its metrics are over the {s.dataset.queries - s.errors}"
            " that answered" for side, s in (("baseline", base), ("candidate", candidate)) if s.errors]


def failed_lines(summary: RunSummary, columns: int, shown: int = SHOWN) -> list[str]:
    """The failed queries of a run for a terminal: how many, every id, and the first ``shown`` with their errors."""
    if not summary.errors:
        return []
    lines = [fit(f"{_count(summary)} of {summary.dataset.queries} (after retries): metrics over the "
                 f"{summary.dataset.queries - summary.errors} that answered", columns)]
    ids = [q.query_id for q in summary.failed]
    line = "failed:"
    for qid in ids:
        if len(line) + 1 + len(qid) > columns and line != "failed:":
            lines.append(line)
            line = " "
        line += f" {qid}"
    if ids:
        lines.append(line)
    lines += [fit(f"  {q.query_id}: {q.code}: {q.message}", columns) for q in summary.failed[:shown]]
    if len(summary.failed) > shown:
        lines.append(f"  ... and {len(summary.failed) - shown} more (run.json lists them all under failed)")
    return lines


def require_answered(base: RunSummary, candidate: RunSummary, allowed: int, columns: int) -> list[str]:
    """The lines to show of either run's failed queries; raises when the candidate has more than ``allowed``.

    Raises:
        ValidationError: the candidate has more failed queries than ``allowed`` (exit 2), after its lines.
    """
    if allowed < 0:
        raise ValidationError(f"--allow-failed must be >= 0, got {allowed}", field="allow_failed")
    lines = [fit(f"note: {n}", columns) for n in failed_notes(base, candidate)]
    if candidate.errors > allowed:
        listed = [*failed_lines(candidate, columns)[1:],
                  fit("a failing target is not gated as a retriever: fix it and evaluate again", columns)]
        raise FailedQueries("\n".join([*lines, *listed]),
                            f"the candidate has {_count(candidate)}, above --allow-failed {allowed}")
    return lines


class FailedQueries(ValidationError):
    """A candidate refused for its failed queries; ``shown`` are the lines naming them, printed before the error."""

    def __init__(self, shown: str, message: str) -> None:
        super().__init__(message, field="allow_failed")
        self.shown = shown
