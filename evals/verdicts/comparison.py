"""Compare a candidate evaluation to a baseline, metric by metric.

Queries are paired by id. A query evaluated on one side only (different
qrels, or a filtered evaluation) scores 0 on the side that lacks it, and is
counted in :attr:`Comparison.only_in_base` / :attr:`Comparison.only_in_candidate`;
means are taken over the union, so they can differ from each side's own mean.
p-values are Holm-corrected across the compared metrics, separately for the
t-test and for the randomization test. A metric ``untested`` (one the runs'
different scored depths change: :mod:`~searchtrace.evals.verdicts.comparability`) has
its means and delta, but no interval and no p-values (NaN, shown ``n/a``).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from rich.table import Table

from searchtrace.errors import ValidationError
from searchtrace.evals.scoring.metrics import Evaluation, Metric, parse_metrics
from searchtrace.evals.scoring.stats import (
    ConfidenceInterval,
    holm,
    paired_bootstrap_ci,
    paired_t_test,
    randomization_test,
)
from searchtrace.evals.verdicts.query_texts import text_line
from searchtrace.terminal import cells, fit, signed

__all__ = ["Comparison", "MetricComparison", "QueryDelta", "compare", "regressed_lines", "to_json", "to_markdown",
           "to_table"]

TIE = 1e-9


@dataclass(frozen=True)
class QueryDelta:
    """One query's score on both sides."""

    query_id: str
    base: float
    candidate: float
    delta: float


@dataclass(frozen=True)
class MetricComparison:
    """Baseline vs candidate on one metric; ``delta = candidate - base``."""

    metric: Metric
    base_mean: float
    candidate_mean: float
    delta: float
    ci: ConfidenceInterval
    p_t_test: float
    p_randomization: float
    p_t_test_holm: float
    p_randomization_holm: float
    wins: int
    ties: int
    losses: int
    most_regressed: tuple[QueryDelta, ...]


@dataclass(frozen=True)
class Comparison:
    """Per-metric comparisons over ``n_queries`` paired queries."""

    metrics: tuple[MetricComparison, ...]
    n_queries: int
    only_in_base: int
    only_in_candidate: int

    @property
    def shared(self) -> int:
        """Queries scored on both sides."""
        return self.n_queries - self.only_in_base - self.only_in_candidate

    def __getitem__(self, metric: Metric | str) -> MetricComparison:
        wanted = Metric.parse(metric)
        for item in self.metrics:
            if item.metric == wanted:
                return item
        raise KeyError(str(wanted))


def _paired(base: Evaluation, cand: Evaluation) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Union of query ids (base order first) and the row of each in base / cand (-1: missing)."""
    ids = list(dict.fromkeys([*base.query_ids.tolist(), *cand.query_ids.tolist()]))
    where_b = {q: i for i, q in enumerate(base.query_ids.tolist())}
    where_c = {q: i for i, q in enumerate(cand.query_ids.tolist())}
    return ids, np.array([where_b.get(q, -1) for q in ids]), np.array([where_c.get(q, -1) for q in ids])


def _side(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    return np.where(rows >= 0, values[np.maximum(rows, 0)] if len(values) else 0.0, 0.0)


def _tests(a: np.ndarray, b: np.ndarray, tested: bool, **resampling: Any) -> dict[str, Any]:
    """The interval and p-values of a paired difference (NaN when not ``tested``)."""
    if not tested:
        return dict(ci=ConfidenceInterval(math.nan, math.nan, resampling["level"]), p_t_test=math.nan,
                    p_randomization=math.nan)
    return dict(ci=paired_bootstrap_ci(a, b, **resampling), p_t_test=paired_t_test(a, b),
                p_randomization=randomization_test(a, b, n_resamples=resampling["n_resamples"],
                                                   seed=resampling["seed"]))


def _one(metric: Metric, ids: list[str], a: np.ndarray, b: np.ndarray, n_regressed: int, tested: bool,
         **resampling: Any) -> dict[str, Any]:
    diff = b - a
    worst = sorted((i for i in range(len(ids)) if diff[i] <= -TIE), key=lambda i: (diff[i], ids[i]))[:n_regressed]
    return dict(
        metric=metric,
        base_mean=float(a.mean()) if len(a) else math.nan,
        candidate_mean=float(b.mean()) if len(b) else math.nan,
        delta=float(diff.mean()) if len(diff) else math.nan,
        **_tests(a, b, tested, **resampling),
        wins=int(np.sum(diff >= TIE)),
        ties=int(np.sum(np.abs(diff) < TIE)),
        losses=int(np.sum(diff <= -TIE)),
        most_regressed=tuple(QueryDelta(ids[i], float(a[i]), float(b[i]), float(diff[i])) for i in worst),
    )


def compare(
    base: Evaluation,
    cand: Evaluation,
    metrics: Iterable[Metric | str] | None = None,
    *,
    n_regressed: int = 5,
    n_resamples: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
    untested: Collection[Metric] = (),
) -> Comparison:
    """Compare ``cand`` to ``base`` on ``metrics`` (default: those both have); no tests on ``untested``.

    Raises:
        ValidationError: a requested metric missing from either evaluation.
    """
    chosen = parse_metrics(metrics) if metrics is not None else tuple(m for m in base.metrics if m in cand.per_query)
    missing = [str(m) for m in chosen if m not in base.per_query or m not in cand.per_query]
    if missing:
        raise ValidationError(f"metrics not in both evaluations: {', '.join(missing)}", field="metrics")
    ids, rows_b, rows_c = _paired(base, cand)
    parts = [
        _one(m, ids, _side(base.per_query[m], rows_b), _side(cand.per_query[m], rows_c), n_regressed,
             m not in untested, n_resamples=n_resamples, seed=seed, level=level)
        for m in chosen
    ]
    t_holm = holm([p["p_t_test"] for p in parts])
    r_holm = holm([p["p_randomization"] for p in parts])
    items = tuple(
        MetricComparison(**p, p_t_test_holm=float(t), p_randomization_holm=float(r))
        for p, t, r in zip(parts, t_holm, r_holm)
    )
    return Comparison(items, len(ids), int(np.sum(rows_c < 0)), int(np.sum(rows_b < 0)))


# --- renderers ---------------------------------------------------------------


def _num(value: float, digits: int = 4) -> str:
    return "n/a" if math.isnan(value) else f"{value:.{digits}f}"


def _p(value: float) -> str:
    return "n/a" if math.isnan(value) else ("<0.0001" if value < 1e-4 else f"{value:.4f}")


def _row(item: MetricComparison, ci_digits: int = 4) -> list[str]:
    return [
        str(item.metric),
        _num(item.base_mean),
        _num(item.candidate_mean),
        signed(item.delta),
        f"[{_num(item.ci.low)}, {_num(item.ci.high)}]" if ci_digits == 4
        else f"{_num(item.ci.low, ci_digits)},{_num(item.ci.high, ci_digits)}",
        _p(item.p_t_test_holm),
        _p(item.p_randomization_holm),
        f"{item.wins}/{item.ties}/{item.losses}",
    ]


_HEADERS = ["metric", "base", "candidate", "delta", "95% CI", "p t-test (Holm)", "p randomization (Holm)", "W/T/L"]
_SHORT_HEADERS = ["metric", "base", "cand", "delta", "95% CI", "p t", "p rand", "W/T/L"]
"""The terminal table's headers: short enough for 80 columns, each unique (the caption spells them out)."""
_CAPTION = ("cand = candidate; p t / p rand = paired t-test / randomization test p, Holm-corrected; "
            "W/T/L = queries the candidate wins/ties/loses")


def _counts(comparison: Comparison) -> str:
    return (f"{comparison.shared} shared queries ({comparison.only_in_base} only in base, "
            f"{comparison.only_in_candidate} only in candidate)")


def to_table(comparison: Comparison) -> Table:
    """A rich table, one row per metric; fits 80 columns, and never cuts a metric name or a number."""
    from rich import box

    table = Table(title=_counts(comparison), caption=_CAPTION, box=box.SIMPLE_HEAD, show_edge=False,
                  pad_edge=False, padding=(0, 1), collapse_padding=True,
                  caption_justify="left")
    for i, header in enumerate(_SHORT_HEADERS):
        table.add_column(header, justify="left" if i == 0 else "right", no_wrap=True)
    for item in comparison.metrics:
        style = "red" if item.delta <= -TIE else ("green" if item.delta >= TIE else None)
        table.add_row(*_row(item, ci_digits=3), style=style)
    return table


def regressed_lines(comparison: Comparison, columns: int, texts: Mapping[str, str] | None = None,
                    metrics: Collection[str] | None = None) -> list[str]:
    """The most regressed queries of each metric (of ``metrics``; None: all), one line each: id, base →
    candidate, change, and below it the query's text when ``texts`` has it; ``columns`` wide at most (a long
    query id or text is cut, with an ellipsis)."""
    lines = []
    for item in comparison.metrics:
        if not item.most_regressed or (metrics is not None and str(item.metric) not in metrics):
            continue
        lines.append(f"most regressed on {item.metric}:")
        scores = [f"  {q.base:.4f} → {q.candidate:.4f}  {signed(q.delta)}" for q in item.most_regressed]
        room = columns - 2 - max(map(cells, scores))
        id_width = max(1, min(room, max(cells(q.query_id) for q in item.most_regressed)))
        for q, score in zip(item.most_regressed, scores):
            query_id = fit(q.query_id, id_width)
            lines.append("  " + query_id + " " * (id_width - cells(query_id)) + score)
            lines += text_line(texts or {}, q.query_id, columns)
    return lines


def _clean(value: float) -> float | None:
    return None if math.isnan(value) else value


def to_json(comparison: Comparison) -> dict:
    """A JSON-ready dict (NaN becomes null)."""
    return {
        "n_queries": comparison.n_queries,
        "shared": comparison.shared,
        "only_in_base": comparison.only_in_base,
        "only_in_candidate": comparison.only_in_candidate,
        "metrics": {
            str(item.metric): {
                "base": _clean(item.base_mean),
                "candidate": _clean(item.candidate_mean),
                "delta": _clean(item.delta),
                "ci": {"low": _clean(item.ci.low), "high": _clean(item.ci.high), "level": item.ci.level},
                "p": {
                    "t_test": _clean(item.p_t_test),
                    "randomization": _clean(item.p_randomization),
                    "t_test_holm": _clean(item.p_t_test_holm),
                    "randomization_holm": _clean(item.p_randomization_holm),
                },
                "wins": item.wins,
                "ties": item.ties,
                "losses": item.losses,
                "most_regressed": [
                    {"query_id": q.query_id, "base": q.base, "candidate": q.candidate, "delta": q.delta}
                    for q in item.most_regressed
                ],
            }
            for item in comparison.metrics
        },
    }


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(comparison: Comparison) -> str:
    """A Markdown table, then the most regressed queries of each metric."""
    lines = [
        f"**{comparison.shared} shared queries** ({comparison.only_in_base} only in base, "
        f"{comparison.only_in_candidate} only in candidate)",
        "",
        "| " + " | ".join(_HEADERS) + " |",
        "|" + "---|" * len(_HEADERS),
    ]
    lines += ["| " + " | ".join(_row(item)) + " |" for item in comparison.metrics]
    for item in comparison.metrics:
        if item.most_regressed:
            lines += ["", f"Most regressed on {item.metric}:", ""]
            lines += [
                f"- `{_escape(q.query_id)}`: {q.base:.4f} → {q.candidate:.4f} ({signed(q.delta)})"
                for q in item.most_regressed
            ]
    return "\n".join(lines) + "\n"
