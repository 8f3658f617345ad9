"""``searchtrace calibrate``: fit the relevance model on one run, report before/after on another.

The fitted file is what ``ConfidenceConfig(calibration_path=...)`` loads. The
report gives ECE, Brier and band precision of the run's own relevance
(before) and of the fitted model's (after), on the evaluation run's results,
which should come from a different split than the one fitted on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from searchtrace.errors import DataError, ValidationError
from searchtrace.evals import report, stats
from searchtrace.evals.calibration import fit_isotonic, fit_logistic
from searchtrace.evals.runfolder import RunFolder, feature_column
from searchtrace.retriever import FEATURES, ConfidenceConfig, Feature, bands, load_calibration

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["calibrate"]


def _xy(folder: RunFolder, table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    columns = [feature_column(f) for f in FEATURES]
    external = folder.summary().external
    if external is not None and (table.empty or any(c not in table or table[c].isna().any() for c in columns)):
        raise ValidationError(f"{folder.path} is an external run ({external.kind} {external.source}): it has no "
                              "relevance features to calibrate; calibrate a run of this project's retriever",
                              field="run")
    missing = [c for c in columns if c not in table]
    if missing:
        raise DataError(str(folder.results_file), None, f"no feature column {', '.join(missing)}; "
                                                         "was the run made by an older searchtrace?")
    return table[columns].to_numpy(np.float64), table["label"].to_numpy(np.int64)


def _quality(relevance: np.ndarray, labels: np.ndarray, thresholds: ConfidenceConfig) -> dict[str, Any]:
    precision, ordered = report.band_precision(bands(relevance, thresholds), labels.tolist())
    return {"ece": stats.expected_calibration_error(relevance, labels), "brier": stats.brier_score(relevance, labels),
            "band_precision": {b.value: {"precision": p.precision, "count": p.count} for b, p in precision.items()}
                              | {"ordered": ordered}}


def calibrate(run: Path, out: Path, *, method: str = "logistic", eval_run: Path | None = None,
              thresholds: ConfidenceConfig | None = None) -> dict[str, Any]:
    """Fit on ``run``'s results, write ``out``, and report on ``eval_run`` (default: ``run``)."""
    thresholds = thresholds or ConfidenceConfig()
    fitted_on = RunFolder.completed(run)
    fit_table = fitted_on.results()
    x, y = _xy(fitted_on, fit_table)
    model = fit_logistic(x, y) if method == "logistic" else fit_isotonic(x, y, feature=Feature.DENSE.value)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(model, indent=2), encoding="utf-8")
    target = RunFolder.completed(eval_run) if eval_run is not None else fitted_on
    table = target.results()
    ex, ey = _xy(target, table)
    fitted = load_calibration(out).predict(ex)
    return {
        "method": method,
        "file": str(out),
        "fitted_on": {"run": fitted_on.run_id, "split": fitted_on.summary().dataset.split, "results": len(fit_table)},
        "evaluated_on": f"{target.run_id} ({target.summary().dataset.split})",
        "held_out": target != fitted_on,
        "before": _quality(table["relevance"].to_numpy(np.float64), ey, thresholds),
        "after": _quality(fitted, ey, thresholds),
    }
