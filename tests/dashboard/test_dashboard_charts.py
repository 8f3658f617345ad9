"""Chart specifications: what the browser is told to draw, checked without a browser."""

from __future__ import annotations

import pandas as pd

from searchtrace.dashboard.ui import charts


def _axis(chart) -> dict:
    spec = chart.to_dict()
    layers = spec.get("layer", [spec])
    return next(layer["encoding"]["x"]["axis"] for layer in layers if "x" in layer.get("encoding", {}))


def test_time_axes_resolve_seconds_for_runs_seconds_apart():
    runs = pd.DataFrame({"created_at": pd.to_datetime(["2026-01-01 09:00:05", "2026-01-01 09:00:25",
                                                       "2026-01-01 09:00:50"]),
                         "value": [0.5, 0.6, 0.55], "group": ["g"] * 3, "name": ["a", "b", "c"],
                         "stage": ["dense"] * 3, "p50": [1.0, 2.0, 1.5], "skipped": [False] * 3})
    axis = _axis(charts.latency_trend(runs, "p50"))  # the metric trend plots run order (test_dashboard_baselines)
    # Vega's multi-format labels each tick at its own unit: 20 s apart reads 09:00:05, 09:00:25, not 09:00 thrice
    assert axis["formatType"] == "time" and axis["format"]["seconds"] == "%H:%M:%S"
    assert axis["format"]["minutes"] == "%H:%M" and "%p" not in "".join(axis["format"].values())  # 24 h clock
    tooltips = charts.trend(runs, "ndcg@10").to_dict()["encoding"]["tooltip"]
    assert any(t.get("format") == "%Y-%m-%d %H:%M:%S" for t in tooltips)
