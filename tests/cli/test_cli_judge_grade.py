"""``judge grade`` records one judgment from the terminal (``--undo`` takes it back); ``judge status`` shows each
query's text and the pairs of its pool left to judge."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from searchtrace.cli import main
from searchtrace.evals.labels.judgments import JudgingFolder, JudgingSession, Tally

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
WIDTH = 80


@pytest.fixture
def dataset(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    monkeypatch.delenv("SEARCHTRACE_STORE", raising=False)
    copy = tmp_path / "sample"
    shutil.copytree(SAMPLE, copy)
    return copy


def _first(path: Path) -> str:
    return json.loads(path.read_text().splitlines()[0])["_id"]


def _standing(dataset: Path, judge: str, pair: tuple[str, str]):
    return Tally(JudgingFolder.at(dataset).store()).refresh().label(pair, judge)


def test_grade_records_through_the_session_and_undo_takes_it_back(dataset, capsys):
    query, doc = _first(dataset / "queries.jsonl"), _first(dataset / "corpus.jsonl")
    assert main(["judge", "grade", str(dataset), query, doc, "2", "--judge", "ana"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [f"ana graded {query} / {doc} 2 (highly relevant), in judgments.jsonl"]
    judgment = _standing(dataset, "ana", (query, doc))
    assert judgment is not None and judgment.grade == 2 and judgment.kind.value == "human"
    assert main(["judge", "grade", str(dataset), query, doc, "1", "--judge", "bo"]) == 0
    capsys.readouterr()
    assert main(["judge", "grade", str(dataset), query, doc, "--undo", "--judge", "ana"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"ana undid {query} / {doc} 2 (highly relevant), in judgments.jsonl"]
    assert _standing(dataset, "ana", (query, doc)) is None  # a retraction (grade null) appended
    assert json.loads((dataset / "judgments.jsonl").read_text().splitlines()[-1])["grade"] is None
    assert _standing(dataset, "bo", (query, doc)).grade == 1  # another judge's label stands
    assert main(["judge", "grade", str(dataset), query, doc, "--undo", "--judge", "ana"]) == 2
    assert "nothing to undo: 'ana' has no standing judgment" in capsys.readouterr().err


def test_grade_defaults_to_the_login_name(dataset, capsys, monkeypatch):
    import getpass

    monkeypatch.setattr(getpass, "getuser", lambda: "login-name")
    query, doc = _first(dataset / "queries.jsonl"), _first(dataset / "corpus.jsonl")
    assert main(["judge", "grade", str(dataset), query, doc, "0"]) == 0
    assert capsys.readouterr().out.startswith("login-name graded ")
    assert _standing(dataset, "login-name", (query, doc)).grade == 0


@pytest.mark.parametrize(("args", "needle"), [
    (["nope", "{doc}", "1"], "unknown query 'nope': not in {dataset}/queries.jsonl"),
    (["{query}", "nope", "1"], "unknown document 'nope'"),
    (["{query}", "{doc}", "7"], "grade 7 is not on the judging scale (0 not relevant, 1 relevant, 2 highly"),
    (["{query}", "{doc}", "high"], "grade 'high' is not on the judging scale (0 not relevant"),
    (["{query}", "{doc}"], "give a GRADE (or --undo to take back a judgment)"),
    (["{query}", "{doc}", "1", "--undo"], "give a GRADE, or --undo to take back a judgment, not both"),
])
def test_a_bad_grade_or_id_is_one_line_naming_it_and_writes_nothing(dataset, capsys, args, needle):
    query, doc = _first(dataset / "queries.jsonl"), _first(dataset / "corpus.jsonl")
    values = {"query": query, "doc": doc, "dataset": dataset}
    assert main(["judge", "grade", str(dataset), *(a.format(**values) for a in args), "--judge", "ana"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and needle.format(**values) in err[0], err
    assert not (dataset / "judgments.jsonl").exists()


def test_grade_on_a_scale_of_the_datasets_own(dataset, capsys):
    (dataset / "judging.toml").write_text('relevant = 3\n[grades]\n0 = "no"\n3 = "yes"\n')
    query, doc = _first(dataset / "queries.jsonl"), _first(dataset / "corpus.jsonl")
    assert main(["judge", "grade", str(dataset), query, doc, "2", "--judge", "ana"]) == 2
    assert "(0 no, 3 yes)" in capsys.readouterr().err
    assert main(["judge", "grade", str(dataset), query, doc, "3", "--judge", "ana"]) == 0
    assert "3 (yes)" in capsys.readouterr().out


def test_status_shows_each_querys_text_and_the_pairs_left_to_judge(dataset, capsys):
    queries = [json.loads(line) for line in (dataset / "queries.jsonl").read_text().splitlines()]
    docs = [json.loads(line)["_id"] for line in (dataset / "corpus.jsonl").read_text().splitlines()[:3]]
    pool = [(queries[0]["_id"], d) for d in docs] + [(queries[1]["_id"], docs[0])]
    (dataset / "pool.jsonl").write_text("".join(
        json.dumps({"query_id": q, "doc_id": d, "sources": [], "deep": True}) + "\n" for q, d in pool))
    JudgingSession.open(dataset).record(queries[0]["_id"], docs[0], 2, "ana")
    assert main(["judge", "status", str(dataset)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["query", "text", "pairs", "relevant", "left", "judges"]
    assert all(len(line) <= WIDTH for line in lines[:-1])
    first = next(line for line in lines if line.startswith(queries[0]["_id"] + " "))
    second = next(line for line in lines if line.startswith(queries[1]["_id"] + " "))
    assert queries[0]["text"][:20] in first and first.split()[-4:] == ["1", "1", "2", "ana"]
    assert queries[1]["text"][:20] in second and second.split()[-3:] == ["0", "0", "1"]  # nothing judged: 1 left
    assert "3 pairs of the pool left" in "\n".join(lines)
    report = json.loads((main(["judge", "status", str(dataset), "--json"]), capsys.readouterr().out)[1])
    assert report["queries"][0]["text"] == queries[0]["text"] and report["queries"][0]["left"] == 2
    assert report["totals"]["left"] == 3
