"""compare's most regressed and most changed queries, and a failed gate's, listed with their text beside their id."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from searchtrace.cli import main
from searchtrace.evals.verdicts.query_texts import query_texts, text_line
from searchtrace.retriever import load_queries

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"
WIDTH = 80


def _folder(dataset: Path) -> SimpleNamespace:
    """What query_texts reads of a run folder: its summary's dataset path."""
    return SimpleNamespace(summary=lambda: SimpleNamespace(dataset=SimpleNamespace(path=str(dataset))))


def test_texts_come_from_the_runs_datasets_and_a_moved_one_is_skipped(tmp_path):
    texts = query_texts([_folder(tmp_path / "moved"), _folder(SAMPLE)])  # type: ignore[list-item]
    assert texts == {q.id: q.text for q in load_queries(SAMPLE / "queries.jsonl")}
    assert query_texts([_folder(tmp_path / "moved")]) == {}  # type: ignore[list-item]
    assert text_line({"q1": "a\nlong " + "word " * 30}, "q1", 40) == ["    a long word word word word word wor…"]
    assert text_line({}, "q1", 40) == []


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory, sample_config, sample_index_path):
    """The sample evaluated in graph mode and in fast mode (the home's index already built)."""
    root = tmp_path_factory.mktemp("query-texts")
    runs = {}
    for mode in ("graph", "fast"):
        runs[mode] = root / mode
        assert main(["eval", str(SAMPLE), "--mode", mode, "--out", str(runs[mode]), "--home",
                     str(sample_config.home.root), "--no-progress", "--json"]) == 0
    return runs


def _text_after(lines: list[str], start: str, texts: dict[str, str]) -> list[tuple[str, str]]:
    """(query id, the line below it) of each listed query after the line starting ``start``."""
    at = next(i for i, line in enumerate(lines) if line.startswith(start))
    found = []
    for line, below in zip(lines[at + 1:], lines[at + 2:]):
        query_id = line.split()[0] if line.startswith("  ") and not line.startswith("   ") else None
        if query_id in texts:
            found.append((query_id, below))
    return found


@pytest.mark.slow
def test_compare_gate_and_compare_without_labels_show_each_listed_querys_text(two_runs, capsys, monkeypatch,
                                                                                tmp_path):
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    texts = {q.id: q.text for q in load_queries(SAMPLE / "queries.jsonl")}
    assert main(["compare", str(two_runs["graph"]), str(two_runs["fast"])]) == 0
    lines = capsys.readouterr().out.splitlines()
    listed = _text_after(lines, "most regressed on ndcg@10:", texts)
    assert listed and all(below.startswith("    " + texts[q][:30]) for q, below in listed), lines
    assert all(len(line) <= WIDTH for line in lines)

    strict = tmp_path / "gate.toml"
    strict.write_text('[metrics."ndcg@10"]\nmax_drop = 0.0\n')
    assert main(["gate", "--baseline", str(two_runs["graph"]), "--candidate", str(two_runs["fast"]),
                 "--config", str(strict)]) == 1
    lines = capsys.readouterr().out.splitlines()
    listed = _text_after(lines, "most regressed on ndcg@10:", texts)
    assert listed and all(below.startswith("    " + texts[q][:30]) for q, below in listed), lines
    assert all(len(line) <= WIDTH for line in lines)

    assert main(["compare", str(two_runs["graph"]), str(two_runs["fast"]), "--no-labels"]) == 0
    lines = capsys.readouterr().out.splitlines()
    listed = _text_after(lines, "most changed, lowest RBO", texts)
    assert listed and all(below.startswith("    " + texts[q][:30]) for q, below in listed), lines
    assert all(len(line) <= WIDTH for line in lines if "--home" not in line)
    summary = json.loads((two_runs["fast"] / "run.json").read_text())
    assert summary["dataset"]["path"] == str(SAMPLE)
