"""``searchtrace calibrate``: fit the relevance model on one run, report before/after on another.

The fitted file is what ``ConfidenceConfig(calibration_path=...)`` loads. The
report gives ECE, Brier and band precision of the run's own relevance
(before) and of the fitted model's (after), on the evaluation run's results,
which should come from a different split than the one fitted on.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from evals import report, stats
from evals.calibration import fit_isotonic, fit_logistic
from evals.run_files import results, run_dir, summary
from retriever.confidence import FEATURES, load_calibration
from retriever.config import ConfidenceConfig


def _xy(table) -> tuple[np.ndarray, np.ndarray]:
    x = table[[f"f_{f}" for f in FEATURES]].to_numpy(np.float64)
    return x, table["label"].to_numpy(np.int64)


def _quality(relevance: np.ndarray, labels: np.ndarray, thresholds: ConfidenceConfig) -> dict:
    bands = np.where(relevance >= thresholds.high, "high", np.where(relevance < thresholds.low, "low", "medium"))
    return {"ece": stats.expected_calibration_error(relevance, labels), "brier": stats.brier_score(relevance, labels),
            "band_precision": report.band_precision(bands.tolist(), labels.tolist())}


def calibrate(run: Path, out: Path, *, method: str = "logistic", eval_run: Path | None = None,
              thresholds: ConfidenceConfig | None = None) -> dict:
    """Fit on ``run``'s results, write ``out``, and report on ``eval_run`` (default: ``run``)."""
    thresholds = thresholds or ConfidenceConfig()
    fit_table = results(run)
    x, y = _xy(fit_table)
    model = fit_logistic(x, y) if method == "logistic" else fit_isotonic(x, y, feature="dense")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(model, indent=2), encoding="utf-8")
    target = run_dir(eval_run or run)
    table = results(target)
    ex, ey = _xy(table)
    fitted = load_calibration(out).predict(ex)
    return {
        "method": method,
        "file": str(out),
        "fitted_on": {"run": run_dir(run).name, "split": summary(run)["dataset"]["split"], "results": len(fit_table)},
        "evaluated_on": f"{target.name} ({summary(target)['dataset']['split']})",
        "held_out": target != run_dir(run),
        "before": _quality(table["relevance"].to_numpy(np.float64), ey, thresholds),
        "after": _quality(fitted, ey, thresholds),
    }
