"""What ``eval`` prints for a person: a run's headline figures, fitted to the terminal's width.

A run id or a folder's path is printed whole, on a line of its own (the one thing
that may be wider than the width: cut, it would name nothing); every other line
fits, wrapped at spaces by rich. ``--json`` prints the summary for programs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from searchtrace.names import Band
from searchtrace.terminal import fit, signed, width

if TYPE_CHECKING:  # rich is slow to import, the records pull in numpy: imported where used
    from rich.console import Console

    from searchtrace.evals.runs.runfolder import BandPrecision, RunSummary

__all__ = ["metric_table", "plain_table", "print_summary"]


def plain_table(title: str, means: Mapping[str, float | None]) -> str:
    """Metric means as aligned text (no rich: ``eval --run`` must start fast)."""
    column = max((len(name) for name in means), default=6)
    lines = [title, f"{'metric':<{column}}  {'value':>6}"]
    lines += [f"{name:<{column}}  {'n/a' if v is None else f'{v:.4f}':>6}" for name, v in means.items()]
    return "\n".join(lines)


def _console() -> Console:
    from rich.console import Console

    return Console(width=width())


def metric_table(titles: list[str], means: Mapping[str, Any]) -> None:
    """``titles`` above (each on its own line, never split inside a run id), then a metric per row."""
    from rich.table import Table

    console = _console()
    for title in titles:
        console.print(title, markup=False, highlight=False, soft_wrap=True)
    table = Table()
    table.add_column("metric", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    for name, value in means.items():
        table.add_row(name, "n/a" if value is None else f"{value:.4f}")
    console.print(table)


def _band_line(precision: Mapping[Band, BandPrecision]) -> str:
    return ", ".join(f"{b.value} {p.precision:.2f} (n={p.count})" if p.precision is not None else f"{b.value} -"
                     for b, p in precision.items())


def _analysis_lines(summary: RunSummary) -> list[str]:
    """Stage attribution, confidence and abstention, one line each (rich markup)."""
    att, conf, lines = summary.attribution, summary.confidence, []
    if summary.external is None:  # a target's stages are not seen from here
        lines.append("candidate recall: " + ", ".join(f"{k} {v:.3f}" for k, v in att.candidate_recall.items()))
    lines.append("gold documents lost at: " + ", ".join(f"{k} {v}" for k, v in att.lost_at.items()))
    lines.append("band precision: " + _band_line(conf.band_precision)
                 + ("" if conf.ordered else "  [red]not ordered[/red]"))
    if conf.ece is not None and conf.brier is not None and conf.auroc is not None:
        lines.append(f"ECE {conf.ece:.3f}  Brier {conf.brier:.3f}  AUROC {conf.auroc:.3f}")
    if summary.abstention:
        a = summary.abstention
        precision = "-" if a.precision is None else f"{a.precision:.3f}"
        lines.append(f"abstention on {a.unanswerable} unanswerable: precision {precision} recall {a.recall:.3f}")
    return lines


def _cost_lines(summary: RunSummary) -> list[str]:
    """What corrective retries gained and what searches took."""
    lines = []
    if summary.corrective:
        c = summary.corrective
        lines.append(f"corrective: {c.weak_queries} weak, {c.changed_answers} changed, gain "
                     + ", ".join(f"{k} {signed(v)}" for k, v in c.gain.items())
                     + f", +{c.added_latency_ms['per_query']:.1f} ms/query")
    total = summary.latency_ms.get("total") or summary.latency_ms.get("search")
    if total:
        lines.append(f"latency p50 {total.p50:.1f} ms, p95 {total.p95:.1f} ms, p99 {total.p99:.1f} ms")
    return lines


def print_summary(folder: Path, summary: RunSummary) -> None:
    """The run's headline figures, for a terminal: the run's id and scope on lines of their own, then the metrics
    (a run of a dataset without labels yet: that it has none, and what it is for)."""
    if summary.dataset.split is None:
        console = _console()
        for line in (f"run {summary.run_id}", f"name: {summary.name}",
                     f"{summary.dataset.name}: no labels yet; {summary.dataset.queries} queries ranked, no metrics",
                     "pool them to judge: searchtrace judge pool DATASET --runs RUN ...",
                     "or compare the rankings with another run's: searchtrace compare BASE RUN"):
            console.print(fit(line, width()), markup=False, highlight=False)
        console.print(f"run folder: {folder}", markup=False, highlight=False, soft_wrap=True)
        return
    metric_table([f"run {summary.run_id}", fit(f"name: {summary.name}", width()),
                  f"{summary.dataset.name} / {summary.dataset.split}: "
                  f"{summary.evaluated_queries} judged of {summary.dataset.of} queries"
                  + (f" ({summary.errors} failed, left out)" if summary.errors else "")], summary.metrics)
    console = _console()
    for line in [*_analysis_lines(summary), *_cost_lines(summary)]:
        console.print(line)
    console.print(f"run folder: {folder}", markup=False, highlight=False, soft_wrap=True)
