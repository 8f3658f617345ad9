"""The Implicit page's data: ``judge implicit`` computed without writing, its tables, and the recompute.

Implicit judgments are kept apart from people's: the page counts the standing
labels of each kind, and shows what the agents' fetches say now (the rate by
position, the pairs with their evidence, the agreement with the human and
imported labels) as a dry run; only :func:`recompute` writes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from searchtrace.dashboard.data.shared import shared_store
from searchtrace.errors import NotFoundError
from searchtrace.evals import (
    ClickThresholds,
    ImplicitReport,
    JudgingFolder,
    ReferenceAgreement,
    implicit_judgments,
    judging_status,
)

__all__ = ["PAIR_COLUMNS", "ImplicitView", "confusion_table", "ctr_table", "implicit_view", "label_counts",
           "pair_table", "recompute", "stamp"]

PAIR_COLUMNS = ("query_id", "doc_id", "grade", "clicks", "impressions", "expected", "coec")


@dataclass(frozen=True)
class ImplicitView:
    """What the page shows: the dry run's report, or why there is none (no served search of the dataset)."""

    report: ImplicitReport | None
    message: str = ""


def implicit_view(home: str | Path, dataset: str | Path, min_impressions: int = 1, stamp: object = None) -> ImplicitView:
    """``judge implicit`` on ``dataset`` from ``home``'s traces, writing nothing (``stamp``: what the caller's
    cache keys on, the store's and the judgments' sizes and times)."""
    try:
        report = implicit_judgments(dataset, home=home, dry_run=True, store=shared_store(),
                                    thresholds=ClickThresholds(min_impressions=min_impressions))
    except NotFoundError as exc:
        if exc.field != "traces":
            raise
        return ImplicitView(None, exc.message)
    return ImplicitView(report)


def recompute(home: str | Path, dataset: str | Path, min_impressions: int = 1) -> ImplicitReport:
    """``judge implicit`` for real: the changed grades appended, pairs no longer judged retracted."""
    return implicit_judgments(dataset, home=home, thresholds=ClickThresholds(min_impressions=min_impressions),
                              store=shared_store())


def stamp(home: str | Path, dataset: str | Path) -> tuple[tuple[int, int], ...]:
    """The sizes and modification times of the trace store and the judgments file (a cache key); with a shared
    store, which has neither, the time to the minute (the page's view is then at most a minute old)."""
    if shared_store() is not None:
        return ((int(time.time() // 60), 0),)
    paths = [Path(home) / "traces.sqlite", Path(home) / "traces.sqlite-wal", JudgingFolder.at(dataset).judgments]
    return tuple((p.stat().st_size, p.stat().st_mtime_ns) if p.exists() else (0, 0) for p in paths)


def label_counts(dataset: str | Path) -> dict[str, int]:
    """Standing judgments of each kind (human, implicit, imported) in the dataset's store."""
    folder = JudgingFolder.at(dataset, shared_store())
    status = judging_status(str(folder.judgments), folder.store().read(), folder.scale())
    return {kind.value: count for kind, count in status.by_kind}


def ctr_table(report: ImplicitReport) -> pd.DataFrame:
    """Per position: impressions, clicks, the raw rate and the smoothed one the expected clicks use."""
    ctr = report.ctr
    return pd.DataFrame({"position": range(1, len(ctr.ctr) + 1), "impressions": ctr.impressions,
                         "clicks": ctr.clicks, "raw": ctr.raw(), "ctr": ctr.ctr,
                         "pooled": [r >= ctr.depth for r in range(len(ctr.ctr))]})


def pair_table(report: ImplicitReport) -> pd.DataFrame:
    """The pairs judged, with their evidence: :data:`PAIR_COLUMNS`, most clicked first."""
    rows = [{c: getattr(p, c) for c in PAIR_COLUMNS} for p in report.pairs]
    frame = pd.DataFrame(rows, columns=list(PAIR_COLUMNS))
    return frame.sort_values(["clicks", "coec"], ascending=False, kind="stable").reset_index(drop=True)


def confusion_table(agreement: ReferenceAgreement) -> pd.DataFrame:
    """Pairs by reference grade (rows) and implicit grade (columns)."""
    return pd.DataFrame([list(row) for row in agreement.confusion],
                        index=[f"reference {g}" for g in agreement.grades],
                        columns=[f"implicit {g}" for g in agreement.grades])
