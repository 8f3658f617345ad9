"""A small home for the dashboard tests: four runs of the real retriever on datasets/sample, with traces.

``base`` (graph mode, depth 100) and ``fast`` (fast mode) differ on many
queries, so Compare has regressions; ``top20`` is ``base`` scored to depth 20;
``nodense`` is a named, tagged run with RRF fusion and the dense stage skipped
(fusion weight 0), so its traces carry skipped stages and its relevance is rank-only.
Folder names carry the UTC stamps the dashboard dates runs by.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"

RUNS: dict[str, tuple[str, dict[str, Any]]] = {
    "base": ("sample-graph-20250101T090000-base", {"mode": "graph"}),
    "fast": ("sample-fast-20250102T090000-fast", {"mode": "fast"}),
    "top20": ("sample-graph-20250103T090000-top20", {"mode": "graph", "depth": 20}),
    "nodense": ("sample-graph-20250104T090000-nodense", {"mode": "graph"}),
}
NODENSE_SEARCH = {"fusion": {"method": "rrf", "weights": {"dense": 0.0}}}
NODENSE_NAME, NODENSE_TAGS, NODENSE_NOTE = "no dense, rrf", ("ablation", "rrf"), "dense stage off"


@pytest.fixture(scope="session")
def run_ids() -> dict[str, str]:
    """Role (base, fast, top20, nodense) to run id."""
    return {role: name for role, (name, _) in RUNS.items()}


@pytest.fixture(scope="session")
def dashboard_home(tmp_path_factory, model) -> Path:
    """The home folder: ``runs/`` with the four runs, ``traces.sqlite`` with their 400 traces."""
    from searchtrace.evals import RunLabel
    from searchtrace.evals.execution import run_eval
    from searchtrace.evals.runfolder import EvalSettings
    from searchtrace.retriever.config.resolve import resolve_config
    from searchtrace.traces import TraceSettings

    home = tmp_path_factory.mktemp("dashboard-home")
    for role, (name, options) in RUNS.items():
        nodense = role == "nodense"
        config = resolve_config(home=home, environ={}, search=NODENSE_SEARCH if nodense else None)
        run_eval(EvalSettings(dataset=str(SAMPLE), **options), config, out=home / "runs" / name, embedder=model,
                 progress=False, trace_settings=TraceSettings.resolve(environ={}),
                 label=RunLabel(NODENSE_NAME, NODENSE_TAGS, NODENSE_NOTE) if nodense else None)
    return home


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium over its DevTools protocol, one per test module."""
    from headless_chromium import Chromium

    with Chromium(timeout_s=60) as chromium:
        yield chromium
