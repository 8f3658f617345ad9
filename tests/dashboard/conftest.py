"""A small home for the dashboard tests: three runs of the real retriever on datasets/sample, with traces.

``base`` (graph mode, depth 100) and ``fast`` (fast mode) differ on many
queries, so Compare has regressions; ``top20`` is ``base`` scored to depth 20.
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
    "top20": ("sample-graph-20250103T090000-top20", {"mode": "graph", "top_k": 20}),
}


@pytest.fixture(scope="session")
def run_ids() -> dict[str, str]:
    """Role (base, fast, top20) to run id."""
    return {role: name for role, (name, _) in RUNS.items()}


@pytest.fixture(scope="session")
def dashboard_home(tmp_path_factory, model) -> Path:
    """The home folder: ``runs/`` with the three runs, ``traces.sqlite`` with their 300 traces."""
    from searchtrace.evals.evaluator import run_eval
    from searchtrace.evals.runfolder import EvalSettings
    from searchtrace.retriever.settings import resolve_config
    from searchtrace.traces import TraceSettings

    home = tmp_path_factory.mktemp("dashboard-home")
    config = resolve_config(home=home, environ={})
    for name, options in RUNS.values():
        run_eval(EvalSettings(dataset=str(SAMPLE), **options), config, out=home / "runs" / name, embedder=model,
                 progress=False, trace_settings=TraceSettings.resolve(environ={}))
    return home
