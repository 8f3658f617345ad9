"""A label-free comparison for a terminal (lines of a given width) and as Markdown.

Both give the means (traffic-weighted beside them when the queries came from
traffic), the band changes, what each p means, then the most changed queries,
each with both trace ids and the command that opens them.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping

from searchtrace.evals.scoring.overlap.rank_biased import top_weight
from searchtrace.evals.verdicts.overlap.result import Means, OverlapComparison, QueryOverlap
from searchtrace.evals.verdicts.query_texts import text_line
from searchtrace.terminal import cells, fit, signed

__all__ = ["TRACE_COMMAND", "to_lines", "to_markdown"]

TRACE_COMMAND = "searchtrace traces show"
"""The command that opens a trace, before its id."""


def _number(value: float, digits: int = 4) -> str:
    return "n/a" if math.isnan(value) else f"{value:.{digits}f}"


def _rows(comparison: OverlapComparison, means: Means) -> list[tuple[str, str]]:
    k, rows = comparison.k, []
    for r in means.rbo:
        rows += [(f"RBO p={r.p:g}", _number(r.ext)), ("  lower bound", _number(r.min)), ("  residual", _number(r.res))]
    return [*rows, (f"Jaccard@{k}", _number(means.jaccard)), (f"new in top {k} (documents)", _number(means.new_in_top, 2)),
            ("latency change (ms)", signed(means.latency_delta_ms, 2))]


def _table(comparison: OverlapComparison) -> list[list[str]]:
    """Header, then one row per measure: name, mean[, traffic-weighted mean]."""
    weighted = comparison.weighted_means()
    rows = _rows(comparison, comparison.means())
    if weighted is None:
        return [["", "mean"], *([name, value] for name, value in rows)]
    return [["", "mean", "traffic-weighted"],
            *([name, value, w] for (name, value), (_, w) in zip(rows, _rows(comparison, weighted)))]


def _explained(comparison: OverlapComparison) -> str:
    depths = [(p, round(1 / (1 - p))) for p in comparison.ps]
    said = "; ".join(f"p={p:g}: the top {d} ranks carry {top_weight(p, d):.0%} of its weight" for p, d in depths)
    text = (f"RBO: rank-biased overlap (Webber, Moffat and Zobel 2010), extrapolated, within [lower bound, lower "
            f"bound + residual]. {said} (eq. 21).")
    if comparison.weights is not None:
        text += (" Traffic-weighted: each query counts count / inclusion probability times (a Horvitz-Thompson "
                 "estimate of the mean over the searches).")
    return text


def _counts(comparison: OverlapComparison) -> str:
    bands = comparison.band_changes()
    return (f"{comparison.shared} shared queries ({comparison.only_in_base} only in base, "
            f"{comparison.only_in_candidate} only in candidate); best band: {bands.up} up, {bands.down} down, "
            f"{bands.same} unchanged")


def _stats(q: QueryOverlap) -> str:
    band = q.bands[0] if q.bands[0] == q.bands[1] else f"{q.bands[0]}→{q.bands[1]}"
    return (f"RBO {q.rbo[0].ext:.4f}  J {q.jaccard:.2f}  new {q.new_in_top}  {band}  "
            f"{signed(q.latency_delta_ms, 1)} ms")


def _trace(side: str, trace_id: str) -> str:
    return f"{side}: {TRACE_COMMAND} {trace_id}" if trace_id else f"{side}: no trace recorded"


def _homes(comparison: OverlapComparison, home: str | None) -> list[str]:
    """Where to find the traces when a run was made in another home than ``home`` (a path is never cut)."""
    other = {h for h in comparison.homes if h is not None and h != home}
    if not other:
        return []
    if len(other) == 1 and comparison.homes[0] == comparison.homes[1]:
        return [f"the traces are in another home: add --home {other.pop()}"]
    return [f"the {side}'s traces: add --home {h}" for side, h in zip(("base", "candidate"), comparison.homes)
            if h is not None and h != home]


def _most_changed_lines(comparison: OverlapComparison, top: int, columns: int, home: str | None,
                        texts: Mapping[str, str]) -> list[str]:
    changed = comparison.most_changed(top)
    if not changed:
        return ["no query's ranking changed"] if top else []
    head = (f"most changed, lowest RBO p={comparison.ps[0]:g} first (J = Jaccard@{comparison.k}, new = documents "
            f"new in the candidate's top {comparison.k}, best band, latency change):")
    lines = ["", *textwrap.wrap(head, columns)]
    stats = [_stats(q) for q in changed]
    id_width = max(1, min(columns - 4 - max(map(cells, stats)), max(cells(q.query_id) for q in changed)))
    for q, said in zip(changed, stats):
        query_id = fit(q.query_id, id_width)
        lines.append(fit("  " + query_id + " " * (id_width - cells(query_id)) + "  " + said, columns))
        lines += text_line(texts, q.query_id, columns)
        lines += [fit("    " + _trace(side, t), columns) for side, t in zip(("base", "cand"), q.trace_ids)]
    return lines + _homes(comparison, home)


def to_lines(comparison: OverlapComparison, top: int = 10, columns: int = 80, home: str | None = None,
             texts: Mapping[str, str] | None = None) -> list[str]:
    """The comparison as lines of at most ``columns`` cells (but for a home folder's path, never cut: the line
    saying where the traces are when a run was made in another home than ``home``); each query listed with its
    text below its id when ``texts`` has it."""
    lines = textwrap.wrap(_counts(comparison), columns)
    table = _table(comparison)
    widths = [max(cells(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        lines.append(fit("  ".join([row[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(row[1:], widths[1:]))]),
                         columns).rstrip())
    lines += textwrap.wrap(_explained(comparison), columns, break_on_hyphens=False)
    return lines + _most_changed_lines(comparison, top, columns, home, texts or {})


def to_markdown(comparison: OverlapComparison, top: int = 10, home: str | None = None) -> str:
    """The means as a table, then the most changed queries with their trace commands."""
    table = _table(comparison)
    lines = [f"**{_counts(comparison)}**", "", "| measure | " + " | ".join(table[0][1:]) + " |",
             "|---" + "|---:" * (len(table[0]) - 1) + "|"]
    parent = ""
    for row in table[1:]:
        parent = row[0] if not row[0].startswith(" ") else parent
        name = row[0] if row[0] is parent else f"{parent}, {row[0].strip()}"
        lines.append("| " + " | ".join([name, *row[1:]]) + " |")
    lines += ["", _explained(comparison)]
    changed = comparison.most_changed(top)
    if not changed and top:
        lines += ["", "No query's ranking changed."]
    if changed:
        lines += ["", f"Most changed, lowest RBO p={comparison.ps[0]:g} first:", ""]
        for q in changed:
            lines.append(f"- `{q.query_id.replace('`', '')}`: {_stats(q)}; "
                         + "; ".join(f"`{_trace(side, t)}`" for side, t in zip(("base", "cand"), q.trace_ids)))
        lines += ["", *_homes(comparison, home)] if _homes(comparison, home) else []
    return "\n".join(lines) + "\n"
