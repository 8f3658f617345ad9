"""Run names, tags and notes: defaults from the settings, validation, and the run.json keys old folders lack."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from searchtrace.errors import ValidationError
from searchtrace.evals import RunFolder, RunLabel, RunSummary, default_run_name, run_settings, settings_diff
from searchtrace.evals.runs.naming import show_setting

BASELINE = Path(__file__).resolve().parents[2] / ".ci" / "baseline"


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


SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"


def _run_name(settings, config) -> str:
    from searchtrace.evals.runs.execution.loop import run_folder

    folder, resuming = run_folder(settings, config, None)
    assert not resuming
    return folder.path.name


def test_run_id_names_the_settings_that_differ_never_default(tmp_path):
    """A run id reads like the run's default name: dataset, the mode asked, each setting that differs."""
    from searchtrace.evals import EvalSettings
    from searchtrace.retriever import resolve_config

    plain = resolve_config(home=tmp_path / "home", environ={})
    rrf = resolve_config(home=tmp_path / "home", environ={}, search={"fusion": {"method": "rrf"}})
    settings = EvalSettings(dataset=str(SAMPLE))
    key = settings.key()
    assert _run_name(settings, plain).startswith("sample-default-") and _run_name(settings, plain).endswith(key)
    changed = _run_name(settings, rrf)
    assert changed.startswith("sample-fusion=rrf-") and "default" not in changed
    deeper = _run_name(replace(settings, mode="fast", depth=20), plain)
    assert deeper.startswith("sample-fast-depth=20-") and "default" not in deeper
    from searchtrace.evals.runs.execution.loop import run_folder

    named, _ = run_folder(settings, rrf, None, RunLabel(name="a long name, " * 9 + "end"))
    assert named.path.name.startswith("a-long-name-a-long-name-") and len(named.path.name) <= 80


def test_eval_names_its_run_id_after_name_and_prints_the_name(tmp_path, capsys):
    import sys
    import types

    from searchtrace.cli import main

    def search(request: dict) -> dict:
        return {"results": [], "bestScore": 0.0, "noConfidentResults": True, "retryHints": None}

    module = types.ModuleType("searchtrace_test_named")
    module.search = search  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    home = tmp_path / "home"
    try:
        for extra in (["--name", "nightly: rrf/dense off"], ["--depth", "20"]):
            code = main(["eval", str(SAMPLE), "--target", f"{module.__name__}:search", "--home", str(home),
                         "--no-progress", *extra])
            assert code == 0
    finally:
        del sys.modules[module.__name__]
    out = capsys.readouterr().out
    assert "name: nightly: rrf/dense off" in out.splitlines()
    assert "name: sample · target · depth=20" in out.splitlines()
    ids = sorted(p.name for p in (home / "runs").iterdir())
    assert [i.rsplit("-", 2)[0] for i in ids] == ["nightly-rrf-dense-off", "sample-target-depth=20"]  # - time - key
