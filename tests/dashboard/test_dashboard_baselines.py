"""Each run against its baseline (Runs and Compare): the baseline chosen, the deltas and verdicts, the forest
plot's rows checked against the evals comparison itself, the trend on run order, p-values as read, and the
pages that show them (AppTest), on a home of small TREC runs scored in about a second each."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from searchtrace.dashboard.data import baselines, compare_metrics, forest_rows, list_runs, p_text, run_deltas, run_order
from searchtrace.dashboard.data.baselines import BETTER, NOT_SIGNIFICANT, WORSE, verdict

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
QUERIES = 40


def _trec(rank: int, misses: int = 0) -> str:
    """Each query's one relevant document at ``rank`` (absent from the first ``misses`` queries)."""
    lines = []
    for q in range(QUERIES):
        docs = [f"d{q}x{j}" for j in range(9)]
        if q >= misses:
            docs.insert(rank - 1, f"d{q}a")
        lines += [f"q{q} Q0 {d} {r} {20 - r} t\n" for r, d in enumerate(docs[:10], 1)]
    return "".join(lines)


#: run id -> (relevant rank, queries missing it, tags, seconds after T0, qrels file = dataset)
RUNS = {
    "r1-good": (1, 0, ("baseline",), 0, "qrels.txt"),
    "r2-worse": (3, 0, (), 1, "qrels.txt"),  # a regression against r1, the tagged baseline
    "r3-same": (1, 0, (), 2, "qrels.txt"),  # r1 again: no change
    "r4-better": (1, 0, (), 3, "other.txt"),  # another dataset, first of it: no baseline
    "r5-slightly": (1, 2, (), 4, "qrels.txt"),  # two queries lost: too few to be significant
}


@pytest.fixture(scope="module")
def runs_home(tmp_path_factory) -> Path:
    """A home of :data:`RUNS`, written with ``eval --run`` and dated seconds apart (as a scripted sweep is)."""
    from searchtrace.cli import main
    from searchtrace.evals import RunFolder

    root = tmp_path_factory.mktemp("baselines")
    home = root / "home"
    for qrels in ("qrels.txt", "other.txt"):
        (root / qrels).write_text("".join(f"q{i} 0 d{i}a 1\n" for i in range(QUERIES)))
    for run_id, (rank, misses, tags, seconds, qrels) in RUNS.items():
        trec = root / f"{run_id}.trec"
        trec.write_text(_trec(rank, misses))
        out = home / "runs" / run_id
        assert main(["eval", "--run", str(trec), "--qrels", str(root / qrels), "--out", str(out),
                     "--home", str(root / "scratch")]) == 0
        folder = RunFolder(out)
        folder.write_summary(replace(folder.summary(), name=run_id, tags=tags,
                                     created_at=T0 + timedelta(seconds=seconds)))
    return home


# --- pure: which run is the baseline ---------------------------------------------------------------------


def _listed(*rows: tuple[str, str, str]) -> pd.DataFrame:
    """A list_runs-shaped table (newest first) of (run_id, dataset, tags)."""
    return pd.DataFrame(rows, columns=["run_id", "dataset", "tags"])


def test_the_baseline_is_the_tagged_run_else_the_previous_one_of_the_dataset():
    runs = _listed(("e", "a", ""), ("d", "b", ""), ("c", "a", "baseline, x"), ("b", "a", ""), ("a", "a", ""))
    got = baselines(runs).set_index("run_id")
    assert got["baseline"].to_dict() == {"e": "c", "d": None, "c": "b", "b": "a", "a": None}
    assert got["baseline_kind"].to_dict() == {"e": "tagged", "d": None, "c": "previous", "b": "previous", "a": None}
    assert baselines(runs)["run_id"].tolist() == runs["run_id"].tolist()  # the table's order


def test_a_baseline_tagged_later_is_not_the_baseline_of_older_runs_and_a_newer_tag_takes_over():
    runs = _listed(("d", "a", ""), ("c", "a", "baseline"), ("b", "a", ""), ("a", "a", "baseline"))
    got = baselines(runs).set_index("run_id")["baseline"].to_dict()
    assert got == {"d": "c", "c": "a", "b": "a", "a": None}
    tagged_only_in_name = _listed(("b", "a", "baselines"), ("a", "a", "not-baseline"))
    assert baselines(tagged_only_in_name).set_index("run_id")["baseline"].to_dict() == {"b": "a", "a": None}


# --- pure: verdicts, p-values, run order -----------------------------------------------------------------


def test_p_values_read_below_one_thousandth_never_as_zero():
    assert [p_text(p) for p in (0.0, 0.0001, 0.000999, 0.001, 0.0123, 1.0)] == [
        "< 0.001", "< 0.001", "< 0.001", "0.001", "0.012", "1.000"]
    assert p_text(math.nan) == p_text(None) == "n/a"


def test_a_verdict_needs_significance_and_a_direction():
    assert verdict(0.1, True) == BETTER and verdict(-0.1, True) == WORSE
    assert verdict(-0.1, False) == verdict(0.0, True) == verdict(math.nan, True) == NOT_SIGNIFICANT


def test_runs_seconds_apart_are_one_step_apart_on_the_trend():
    stamps = pd.to_datetime(["2026-01-01 09:00:00", "2026-01-01 09:00:01", "2026-01-09 12:00:00",
                             "2026-01-01 09:00:02"], utc=True)
    points = pd.DataFrame({"run_id": list("abdc"), "created_at": stamps, "value": [0.1, 0.2, 0.4, 0.3],
                           "group": "g", "name": list("abdc")})
    ordered = run_order(points)
    assert ordered["run_id"].tolist() == list("abcd") and ordered["order"].tolist() == [1, 2, 3, 4]
    assert run_order(points.iloc[:0])["order"].tolist() == []


def test_the_trend_chart_plots_run_order_with_room_around_every_point():
    from searchtrace.dashboard.ui import charts

    points = run_order(pd.DataFrame({"run_id": list("abc"), "created_at": pd.to_datetime(
        ["2026-01-01 09:00:00", "2026-01-01 09:00:01", "2026-01-01 09:00:02"], utc=True),
        "value": [0.5, 0.9, 0.7], "group": ["g", "g", "h"], "name": list("abc")}))
    spec = charts.trend(points, "ndcg@10").to_dict()
    x, y = spec["encoding"]["x"], spec["encoding"]["y"]
    assert x["field"] == "order" and x["type"] == "quantitative"  # not created_at: no pile-up at the edges
    assert x["scale"]["domain"] == [0.5, 3.5]  # half a step beyond the first and last run
    assert y["scale"]["padding"] > 0 and y["scale"]["zero"] is False  # no point on the frame's edge
    colours = {c.lower() for c in spec["encoding"]["color"]["scale"]["range"]}
    assert not colours & {c.lower() for c in charts.VERDICT_HEX.values()}  # green, red, grey mean verdicts


# --- on run folders: the evals comparison's own numbers ---------------------------------------------------


def test_forest_rows_carry_the_evals_comparison_intervals_and_p_values(runs_home):
    from searchtrace.evals import Evaluation, RunFolder, compare

    table = compare_metrics(runs_home, "r1-good", "r2-worse")
    rows = forest_rows(table).set_index("metric")
    frames = [RunFolder(runs_home / "runs" / r).per_query() for r in ("r1-good", "r2-worse")]
    metrics = table["metric"].tolist()
    evals = [Evaluation.from_arrays(f["query_id"].tolist(), {m: f[m].to_numpy() for m in metrics}) for f in frames]
    direct = {str(c.metric): c for c in compare(evals[0], evals[1], metrics, n_resamples=10_000, seed=0).metrics}
    assert set(rows.index) == set(direct)
    for metric, row in rows.iterrows():
        want = direct[metric]
        assert (row["delta"], row["ci_low"], row["ci_high"], row["p"]) == pytest.approx(
            (want.delta, want.ci.low, want.ci.high, want.p_randomization_holm), nan_ok=True)
    # the relevant document moved from rank 1 to rank 3 in every query: 1/log2(4) - 1 of nDCG, exactly
    ndcg = rows.loc["ndcg@10"]
    assert ndcg["delta"] == pytest.approx(1 / np.log2(4) - 1) and ndcg["verdict"] == WORSE
    assert ndcg["p_text"] == "< 0.001"
    assert rows.loc["recall@5", "verdict"] == NOT_SIGNIFICANT and rows.loc["recall@5", "delta"] == 0


def test_each_run_is_measured_against_its_baseline(runs_home):
    runs = list_runs(runs_home)
    deltas = run_deltas(runs_home, runs, "ndcg@10").set_index("run_id")
    assert deltas["baseline"].to_dict() == {"r5-slightly": "r1-good", "r4-better": None, "r3-same": "r1-good",
                                            "r2-worse": "r1-good", "r1-good": None}
    assert deltas.loc["r2-worse", "verdict"] == WORSE
    assert deltas.loc["r3-same", "verdict"] == NOT_SIGNIFICANT and deltas.loc["r3-same", "delta"] == 0
    assert deltas.loc["r5-slightly", "verdict"] == NOT_SIGNIFICANT
    assert deltas.loc["r5-slightly", "delta"] == pytest.approx(-2 / QUERIES)
    assert deltas.loc["r4-better", "verdict"] is None and math.isnan(deltas.loc["r4-better", "delta"])
    pair = compare_metrics(runs_home, "r1-good", "r2-worse").set_index("metric").loc["ndcg@10"]
    assert deltas.loc["r2-worse", ["delta", "ci_low", "ci_high", "p"]].tolist() == pytest.approx(
        [pair["delta"], pair["ci_low"], pair["ci_high"], pair["p_randomization"]])


# --- the pages (AppTest) ----------------------------------------------------------------------------------


def _open(home: Path, monkeypatch, script: str | None = None, **params: str):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("SEARCHTRACE_HOME", str(home))
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    if script is not None:
        at.query_params.clear()
        at.query_params.update(params)
        at = at.switch_page(script).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _plain(markdown: str) -> str:
    """Markdown from ``ui.text.md`` as the reader sees it (escapes and word joiners gone)."""
    return markdown.replace("\\", "").replace("\u2060", "")


def _helps(element) -> dict[str, str]:
    """A dataframe's column help marks, by column."""
    config = json.loads(element.proto.columns or "{}")
    return {name: c["help"] for name, c in config.items() if c.get("help")}


def test_runs_page_flags_the_regression_in_words_and_shows_each_delta(runs_home, monkeypatch):
    at = _open(runs_home, monkeypatch)
    assert [t.value for t in at.title] == ["Runs"]
    warnings = [_plain(w.value) for w in at.warning]
    assert warnings == ["▼ 1 run is significantly worse than the baseline on ndcg@10: r2-worse -0.500 against "
                        "r1-good (p < 0.001)."]
    assert any("green = better and significant, red = worse" in c.value for c in at.caption)
    table = at.dataframe[0].value.set_index("run_id")
    assert table.loc["r2-worse", "vs baseline"] == "▼ regression" and table.loc["r2-worse", "p"] == "< 0.001"
    assert table.loc["r2-worse", "delta"] == pytest.approx(1 / np.log2(4) - 1)
    assert table.loc["r3-same", "vs baseline"] == "= not significant"
    assert table.loc["r4-better", "vs baseline"] == "" and table.loc["r2-worse", "baseline"] == "r1-good"
    assert table.loc["r5-slightly", "compare"] == "compare?base=r1-good&cand=r5-slightly"
    helps = _helps(at.dataframe[0])
    assert {"ndcg@10", "mrr@10", "recall@5", "delta", "p", "vs baseline", "baseline"} <= set(helps)
    assert "rank" in helps["mrr@10"] and "top 10" in helps["ndcg@10"]
    assert "ndcg@10" in at.selectbox(key="trend-metric").help
    at.selectbox(key="trend-metric").set_value("hit@10").run()  # no run differs on it: nothing flagged
    assert not at.warning and any("No run shown is significantly worse" in c.value for c in at.caption)


def test_compare_opens_on_the_newest_run_against_its_baseline_not_the_run_before(runs_home, monkeypatch):
    at = _open(runs_home, monkeypatch, "views/compare.py")
    assert [t.value for t in at.title] == ["Compare"]
    # the newest run is r5; the run before it is r4 (another dataset); its baseline is r1, tagged
    assert (at.query_params["base"], at.query_params["cand"]) in (("r1-good", "r5-slightly"),
                                                                (["r1-good"], ["r5-slightly"]))
    assert any("against its baseline" in c.value for c in at.caption)
    at = _open(runs_home, monkeypatch, "views/compare.py", base="r1-good", cand="r2-worse")
    metrics = at.dataframe[0].value.set_index("metric")
    assert metrics.loc["ndcg@10", "verdict"] == WORSE and metrics.loc["ndcg@10", "p_randomization"] == "< 0.001"
    assert metrics.loc["recall@5", "verdict"] == NOT_SIGNIFICANT
    assert not metrics["p_randomization"].isin(["0.000"]).any()
    assert {"wins", "ties", "losses"} <= set(metrics.columns)
    assert list(metrics.columns[:6]) == ["delta", "verdict", "p_randomization", "wins", "ties", "losses"]
    assert {"delta", "verdict", "p_randomization", "wins", "ci_low"} <= set(_helps(at.dataframe[0]))
    assert "Normalized discounted cumulative gain" in at.selectbox(key="compare-metric").help
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    forest = [s for s in specs if any(layer.get("encoding", {}).get("x2", {}).get("field") == "ci_high"
                                      for layer in s.get("layer", []))]
    assert len(forest) == 1  # the forest plot: each metric's interval, coloured by verdict
    colour = next(layer["encoding"]["color"] for layer in forest[0]["layer"] if "color" in layer.get("encoding", {}))
    assert colour["field"] == "verdict" and colour["scale"]["domain"] == [BETTER, WORSE, NOT_SIGNIFICANT]
    assert any("green = better and significant" in c.value for c in at.caption)


def test_the_forest_plot_keeps_every_interval_and_the_zero_line_off_the_frame():
    from searchtrace.dashboard.ui import charts

    rows = pd.DataFrame({"metric": ["a", "b"], "delta": [-0.1, -0.02], "ci_low": [-0.2, -0.03],
                         "ci_high": [-0.05, -0.01], "p": [0.0001, 0.2], "p_text": ["< 0.001", "0.200"],
                         "verdict": [WORSE, NOT_SIGNIFICANT]})
    spec = charts.forest(rows).to_dict()
    x = next(layer["encoding"]["x"] for layer in spec["layer"] if "x2" in layer.get("encoding", {}))
    lo, hi = x["scale"]["domain"]
    assert lo < -0.2 and hi > 0.0  # the widest interval and 0 (no change) both inside, with room
    assert spec["height"] == {"step": 34}  # one row per metric: no label dropped for lack of room


def test_run_deltas_asks_each_pair_once_through_the_comparison_it_is_given(runs_home):
    asked = []

    def recording(home, base, cand, **options):
        asked.append((base, cand, options["n_resamples"], options["seed"]))
        return compare_metrics(home, base, cand, **options)

    run_deltas(runs_home, list_runs(runs_home), "mrr@10", compared=recording)
    assert asked == [("r1-good", "r5-slightly", 10_000, 0), ("r1-good", "r3-same", 10_000, 0),
                     ("r1-good", "r2-worse", 10_000, 0)]  # the page passes its cache here; no baseline, no call
