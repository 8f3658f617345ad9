"""Run names, tags and notes: defaults from the settings, validation, and the run.json keys old folders lack."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from searchtrace.errors import ValidationError
from searchtrace.evals import RunFolder, RunLabel, RunSummary, default_run_name, run_settings, settings_diff
from searchtrace.evals.naming import show_setting

BASELINE = Path(__file__).resolve().parents[1] / ".ci" / "baseline"


def with_config(summary: RunSummary, **sections: dict) -> RunSummary:
    config = json.loads(json.dumps(dict(summary.retriever.config)))
    for section, values in sections.items():
        config[section] = {**config.get(section, {}), **values}
    return replace(summary, retriever=replace(summary.retriever, config=config))


def test_default_name_lists_only_settings_that_differ_from_the_defaults():
    summary = RunFolder.completed(BASELINE).summary()
    plain = default_run_name(summary)
    assert plain == f"{summary.dataset.name} · {summary.retriever.mode}"
    changed = with_config(summary, fusion={"method": "rrf", "weights": {"dense": 0.0, "keyword": 1.0, "graph": 1.0}})
    assert default_run_name(changed) == f"{plain} · fusion=rrf · dense weight=0"
    deeper = replace(summary, settings=replace(summary.settings, depth=20))
    assert default_run_name(deeper) == f"{plain} · depth=20"


def test_settings_diff_reads_as_a_change():
    summary = RunFolder.completed(BASELINE).summary()
    changed = with_config(summary, fusion={"weights": {"dense": 0.0, "keyword": 1.0, "graph": 1.0}})
    assert settings_diff(run_settings(summary), run_settings(changed)) == [("dense weight", "1", "0")]
    assert settings_diff(run_settings(summary), run_settings(summary)) == []
    assert "home" not in run_settings(summary) and "index" not in run_settings(summary)
    assert [show_setting(x) for x in (True, 0.5, None, ("a", 2.0))] == ["on", "0.5", "-", "a,2"]


def test_name_tags_and_note_round_trip_and_old_summaries_read_unnamed():
    summary = RunFolder.completed(BASELINE).summary()
    data = summary.to_json()
    for key in ("name", "tags", "note"):
        data.pop(key, None)  # a run.json written before these keys existed
    old = RunSummary.from_json(data, "run.json")
    assert (old.name, old.tags, old.note) == (None, (), None)
    named = replace(summary, name="sample · graph · fusion=rrf", tags=("ablation", "nightly"), note="dense off")
    again = RunSummary.from_json(json.loads(json.dumps(named.to_json())), "run.json")
    assert again == named and again.to_json()["format"] == data["format"]  # additive keys: same format


@pytest.mark.parametrize("label", [{"name": " "}, {"name": "x" * 121}, {"tags": ("a,b",)}, {"tags": ("",)}])
def test_bad_labels_are_refused_by_field(label):
    with pytest.raises(ValidationError):
        RunLabel(**label)


def test_eval_parser_takes_name_tags_and_note():
    import argparse

    from searchtrace.evals.cli import register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["eval", "d", "--name", "n", "--tag", "a", "--tag", "b", "--note", "why"])
    assert (args.name, args.tag, args.note) == ("n", ["a", "b"], "why")
    assert parser.parse_args(["eval", "d"]).tag == []
