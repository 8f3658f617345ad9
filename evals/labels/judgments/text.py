"""``judge status`` and ``judge export`` for a person: lines fitted to the terminal's width.

Ids too long for their column are cut with an ellipsis; ``--json`` (status)
gives them whole.
"""

from __future__ import annotations

from collections.abc import Sequence

from searchtrace.evals.labels.judgments.agreement import Agreement
from searchtrace.evals.labels.judgments.labels import PairLabels
from searchtrace.evals.labels.judgments.qrels_export import Export
from searchtrace.evals.labels.judgments.status import Status
from searchtrace.terminal import cells, fit, one_line

__all__ = ["export_lines", "status_lines"]

_GAP = "  "


def _cell(text: str, columns: int) -> str:
    """``text`` on one line, cut or padded to ``columns`` cells."""
    shown = fit(one_line(text), columns)
    return shown + " " * (columns - cells(shown))


def _column(values: Sequence[str], header: str, most: int) -> int:
    """A column as wide as its widest value or header, at most ``most``."""
    return min(max([cells(header), *(cells(one_line(v)) for v in values)]), most)


def _count(n: int, noun: str, plural: str = "") -> str:
    """``1 judge``, ``2 judges``."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def _number(value: float | None) -> str:
    return "n/a" if value is None or value != value else f"{value:.3f}"


def status_lines(status: Status, width: int) -> list[str]:
    """The status table, one line per query (its id, its text cut to fit, pairs judged and left), then the totals."""
    if not status.queries:
        return [f"no judgments in {status.location}"]
    q = _column([s.query_id for s in status.queries], "query", max(8, width // 4))
    j = _column([", ".join(s.judges) for s in status.queries], "judges", 16)
    numbers = f"{_GAP} pairs{_GAP}relevant{_GAP} left{_GAP}"
    t = max(10, width - q - len(_GAP) - cells(numbers) - j)
    rows = [f"{_cell('query', q)}{_GAP}{_cell('text', t)}{numbers}judges"]
    for s in status.queries:
        left = "-" if s.left is None else str(s.left)
        rows.append(f"{_cell(s.query_id, q)}{_GAP}{_cell(s.text, t)}{_GAP}{s.pairs:>6}{_GAP}{s.relevant:>8}{_GAP}"
                    f"{left:>5}{_GAP}{', '.join(s.judges)}")
    kinds = ", ".join(f"{kind.value} {count}" for kind, count in status.by_kind)
    left_total = "" if status.left is None else f", {_count(status.left, 'pair')} of the pool left"
    rows += [f"total: {_count(len(status.queries), 'query', 'queries')}, {_count(status.pairs, 'pair')} judged, "
             f"{status.relevant} relevant{left_total}, {_count(len(status.judges), 'judge')}",
             f"standing judgments: {kinds}"]
    return [fit(row.rstrip(), width) for row in rows] + [f"judgments in {status.location}"]


def export_lines(export: Export, width: int) -> list[str]:
    """What was written, then the judges' agreement and the pairs they disagree on."""
    judges = sorted({judge for p in export.labels for judge in p.judges})
    rows = [f"{_count(len(export.labels), 'pair')} of {_count(export.queries, 'query', 'queries')}, "
            f"from {_count(len(judges), 'judge')}: {', '.join(judges)}"]
    if export.agreement is not None:
        rows += _agreement_lines(export.agreement, width)
    return [fit(row, width) for row in rows] + [f"wrote {export.path}"]


def _agreement_lines(agreement: Agreement, width: int) -> list[str]:
    if not agreement.shared:
        return ["agreement: no pair is judged by two judges or more"]
    rows = [f"agreement on the {_count(len(agreement.shared), 'pair')} judged by two judges or more:"]
    if agreement.cohen is not None:
        rows.append(f"  Cohen's kappa         {_number(agreement.cohen)}")
    if agreement.fleiss is not None:
        rows += [f"  Fleiss' kappa         {_number(agreement.fleiss)}",
                 f"  Krippendorff's alpha  {_number(agreement.alpha)} (ordinal)"]
    disputed = agreement.disputed
    rows.append(f"disagreements: {_count(len(disputed), 'pair')}" if disputed else "disagreements: none")
    return rows + _disputed_lines(disputed, width)


def _disputed_lines(disputed: Sequence[PairLabels], width: int) -> list[str]:
    if not disputed:
        return []
    q = _column([p.pair[0] for p in disputed], "query", max(8, width // 4))
    d = _column([p.pair[1] for p in disputed], "doc", max(8, width // 3))
    rows = [f"  {_cell('query', q)}{_GAP}{_cell('doc', d)}{_GAP}grades"]
    for p in disputed:
        grades = ", ".join(f"{judge} {grade}" for judge, grade in p.grades)
        rows.append(f"  {_cell(p.pair[0], q)}{_GAP}{_cell(p.pair[1], d)}{_GAP}{grades}")
    return rows
