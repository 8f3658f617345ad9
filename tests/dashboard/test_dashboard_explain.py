"""One sentence for every figure a page shows (``dashboard.ui.explain``), importable without Streamlit."""

from __future__ import annotations

import subprocess
import sys

import pytest

from searchtrace.dashboard.ui.explain import FIGURES, METRICS, explain, legend
from searchtrace.evals import DEFAULT_METRICS, Metric, MetricName


def test_every_metric_family_has_its_sentence():
    assert set(METRICS) == {m.value for m in MetricName}  # a new family fails here until it is explained


@pytest.mark.parametrize("name", [str(m) for m in DEFAULT_METRICS] + ["judged@10", "ndcg_min@10", "ndcg_max@10",
                                                                        "MAP", "precision@5", "bpref"])
def test_each_metric_a_run_scores_is_explained_with_its_cutoff(name):
    text = explain(name)
    assert text is not None and text.endswith(".") and len(text) < 260
    metric = Metric.parse(name)
    if metric.k is not None and metric.name.value in METRICS and "{at}" in METRICS[metric.name.value]:
        assert f"top {metric.k}" in text


@pytest.mark.parametrize("name", ["ECE", "Brier", "AUROC", "AURC", "RBO", "p-value", "p50", "p95", "p99",
                                  "Kendall tau", "Jaccard", "delta", "CI", "wins/ties/losses", "baseline"])
def test_each_other_figure_is_explained(name):
    assert explain(name) == FIGURES[name.lower()]


def test_a_name_nothing_explains_gets_none_and_is_left_out_of_a_legend():
    assert explain("ndcg@") is None and explain("wall_s") is None and explain("made_up@10") is None
    assert legend(["ndcg@10", "wall_s", "ECE"]).split("\n\n") == [
        f"**ndcg@10**: {explain('ndcg@10')}", f"**ECE**: {explain('ECE')}"]


def test_importing_it_does_not_import_streamlit():
    code = "import sys, searchtrace.dashboard.ui.explain; print('streamlit' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
