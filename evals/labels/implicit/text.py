"""``judge implicit`` for a person: what was read and linked, the rate by position as bars, the judgments
written, the agreement with the reference; every line fitted to the terminal's width."""

from __future__ import annotations

from searchtrace.evals.labels.implicit.clicks import LinkCounts
from searchtrace.evals.labels.implicit.coec import PositionCtr
from searchtrace.evals.labels.implicit.judge import ImplicitReport
from searchtrace.evals.labels.implicit.reference import ReferenceAgreement
from searchtrace.terminal import fit

__all__ = ["CTR_POSITIONS", "implicit_lines"]

CTR_POSITIONS = 10
"""Positions the rate by position shows."""
_SHORT = 12  # digits of a trace id shown (``traces show`` takes a prefix)
_BAR = "█"


def _n(count: int, noun: str, plural: str = "") -> str:
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _named(fetches: int, ids: int, examples: tuple[str, ...], what: str) -> str:
    """``2 fetches naming 1 trace <what>: 0123456789ab`` (the first ids, cut to 12 digits; the line is cut to the
    width, so as many as fit show)."""
    shown = ", ".join(t[:_SHORT] for t in examples) + (", …" if ids > len(examples) else "")
    return (f"{_n(fetches, 'fetch', 'fetches')} naming {_n(ids, 'trace')} {what}" + (f": {shown}" if examples else "")
            if fetches else f"no fetch naming a trace {what}")


def link_lines(name: str, c: LinkCounts, uncaptured: int) -> list[str]:
    """Impressions, fetches, clicks, and each kind of fetch that judged nothing."""
    rows = [f"  impressions    {_n(c.impressions, 'search', 'searches')}"
            + (f" ({uncaptured:,} without query text: rates only)" if uncaptured else ""),
            f"  fetches        {c.fetches:,}, of {_n(c.fetched, 'document')}",
            f"  clicks         {c.clicks:,} ({c.by_trace_id:,} by traceId, {c.clicks - c.by_trace_id:,} by session)"
            + (f"; {c.repeats:,} repeats not counted" if c.repeats else ""),
            "  unknown trace  " + _named(c.unknown_traces, c.unknown_ids, c.unknown_examples, "not in the store")]
    if c.not_searches:
        rows.append("  not a search   " + _named(c.not_searches, c.not_search_ids, c.not_search_examples,
                                                 f"that no search of {name} read holds"))
    if c.not_shown:
        rows.append(f"  not shown      {_n(c.not_shown, 'document')} the named search did not show")
    rows.append(f"  unattributed   {_n(c.unattributed, 'document')} no search led to (no traceId, no session's)")
    return rows


def ctr_lines(ctr: PositionCtr, width: int) -> list[str]:
    """The first positions' rate: position, rate, clicks/impressions and a bar scaled to the highest rate."""
    shown = min(CTR_POSITIONS, len(ctr.ctr))
    if not shown:
        return []
    pooled = f"; past {ctr.depth} pooled" if ctr.depth < len(ctr.ctr) else ""
    rows = [f"click-through rate by position (smoothed{pooled}):"]
    figures = [f"{r + 1:>4}  {ctr.ctr[r]:.3f}  {ctr.clicks[r]:>6,}/{ctr.impressions[r]:<7,}" for r in range(shown)]
    room = max(0, width - max(len(f) for f in figures) - 2)
    top = float(ctr.ctr[:shown].max())
    for r, figure in enumerate(figures):
        bar = _BAR * round(room * float(ctr.ctr[r]) / top) if top > 0 else ""
        rows.append(f"{figure}  {bar}".rstrip())
    return rows


def agreement_lines(a: ReferenceAgreement | None) -> list[str]:
    """The agreement's statistics and its confusion of grades."""
    if a is None:
        return ["agreement: no pair judged has a human or imported label (or one --qrels gives)"]
    rows = [f"agreement on {_n(a.pairs, 'pair')} with the {a.reference}:",
            f"  Cohen's kappa {_number(a.cohen)} (grades), {_number(a.binary)} (relevant or not)",
            f"  Krippendorff's alpha {_number(a.alpha)} (ordinal)",
            "  reference \\ implicit" + "".join(f"{g:>7}" for g in a.grades)]
    rows += [f"  {g:>20}" + "".join(f"{n:>7,}" for n in row) for g, row in zip(a.grades, a.confusion)]
    return rows


def implicit_lines(report: ImplicitReport, width: int, dry_run: bool = False) -> list[str]:
    """The whole summary; the last line names the judgments file whole."""
    grades = ", ".join(f"{g}: {n:,}" for g, n in report.grade_counts().items()) or "none"
    rows = [f"judge implicit: dataset {report.name}",
            *link_lines(report.name, report.counts, report.uncaptured), *ctr_lines(report.ctr, width),
            f"judgments by {report.judge}: {_n(len(report.pairs), 'pair')} (grades {grades})"]
    if report.outside_corpus:
        rows.append(f"  {_n(report.outside_corpus, 'pair')} left out: documents the corpus lacks")
    rows.append(f"  {report.added:,} added, {report.changed:,} changed, {report.unchanged:,} unchanged, "
                f"{report.retracted:,} retracted")
    rows += agreement_lines(report.agreement)
    out = [*(fit(row, width) for row in rows), f"traces read from {report.store}"]
    if dry_run:
        return [*out, "dry run: nothing written"]
    return [*out, f"{_n(report.written, 'judgment')} written to {report.dataset}/judgments.jsonl"]
