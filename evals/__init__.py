"""searchtrace evals: runs and qrels, metrics, statistics, comparison, gate, calibration.

Submodules: :mod:`evals.trec` (files), :mod:`evals.runs` (containers),
:mod:`evals.metrics`, :mod:`evals.stats`, :mod:`evals.compare`,
:mod:`evals.gate`, :mod:`evals.calibration`. The names below load their
module on first use, so ``import evals`` stays cheap (no scipy, sklearn or
rich). The verbs ``compare`` and ``gate`` share their module's name and are
imported from there: ``from evals.compare import compare``.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "DEFAULT_METRICS",
    "Comparison",
    "Evaluation",
    "ExitCode",
    "GateConfig",
    "GateResult",
    "Metric",
    "MetricName",
    "Qrels",
    "Run",
    "evaluate",
    "fit_isotonic",
    "fit_logistic",
    "parse_metrics",
    "read_qrels",
    "read_run",
    "write_run",
]

_HOME = {
    "DEFAULT_METRICS": "evals.metrics",
    "Comparison": "evals.compare",
    "Evaluation": "evals.metrics",
    "ExitCode": "evals.gate",
    "GateConfig": "evals.gate",
    "GateResult": "evals.gate",
    "Metric": "evals.metrics",
    "MetricName": "evals.metrics",
    "Qrels": "evals.runs",
    "Run": "evals.runs",
    "evaluate": "evals.metrics",
    "fit_isotonic": "evals.calibration",
    "fit_logistic": "evals.calibration",
    "parse_metrics": "evals.metrics",
    "read_qrels": "evals.trec",
    "read_run": "evals.trec",
    "write_run": "evals.trec",
}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(importlib.import_module(_HOME[name]), name)
    raise AttributeError(f"module 'evals' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
