"""The run-folder format: records round-trip, format 1 still reads, damage and newer formats are named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from searchtrace.errors import DataError, NotFoundError, ValidationError
from searchtrace.evals.runs.runfolder import (
    FORMAT_VERSION,
    CorrectiveOutcome,
    EvalSettings,
    Journal,
    QueryOutcome,
    RankedResult,
    RetryAttempt,
    RunFolder,
    RunSummary,
    record_from_json,
)
from searchtrace.evals.scoring.attribution import GoldTrace, LostAt
from searchtrace.evals.scoring.latency import percentiles
from searchtrace.home import Home
from searchtrace.names import Band
from searchtrace.retriever import RetryHints, Triple

BASELINE = Path(__file__).resolve().parents[2] / ".ci" / "baseline"  # a format-1 run folder, as written then


def outcome(query_id: str, **over: object) -> QueryOutcome:
    fields: dict = dict(
        query_id=query_id, category="multi-hop", latency_ms={"dense": 1.5, "total": 4.25},
        ranking=(("d1", 3.5), ("d2", 1.25)),
        results=(RankedResult("d1", 0.81, Band.HIGH, 2, {"dense": 0.7, "rank": 1.0}),
                 RankedResult("d2", 0.4, Band.MEDIUM, 0, {"dense": 0.5, "rank": 0.5})),
        best_score=0.81, no_confident=False, bands=(Band.HIGH, Band.MEDIUM), weak=False,
        retry_hints=RetryHints(("Vell",), (), "", ""),
        kg=(Triple("a", "b", "c", "d1"),), rewrite_terms=("Vell Sound",),
        degraded=("graph",), trace_id="ab" * 16,
        attribution=(GoldTrace(query_id, "d1", 2, ("dense", "keyword"), 1, False, 1, LostAt.FOUND),))
    return QueryOutcome(**(fields | over))


def test_journal_records_round_trip(tmp_path):
    journal = Journal(tmp_path / "journal.jsonl")
    records = [outcome("q1"), outcome("q2", error="SEARCH_ERROR", kg=None),
               CorrectiveOutcome("q1", "narrower", (("d3", 1.0),), 0.9, 12.5, (RetryAttempt("narrower", "x", 0.9, 12.5),))]
    journal.append(records)
    assert journal.read() == records
    first = json.loads(journal.path.read_text().splitlines()[0])
    assert first["format"] == FORMAT_VERSION and first["kind"] == "query"
    assert first["results"][0]["features"] == {"dense": 0.7, "rank": 1.0}  # by name, never by column


def test_torn_last_line_is_ignored_and_cut(tmp_path):
    j = Journal(tmp_path / "journal.jsonl")
    j.append([outcome("a"), outcome("b")])
    with open(j.path, "ab") as fh:
        fh.write(b'{"format": 2, "kind": "query", "query_id": "c", "rank')  # killed mid-write
    assert [r.query_id for r in j.read()] == ["a", "b"]
    j.truncate_torn_tail()
    j.append([outcome("c")])
    assert [r.query_id for r in j.read()] == ["a", "b", "c"]


def test_a_broken_line_is_skipped_and_named_with_file_and_line(tmp_path):
    j = Journal(tmp_path / "journal.jsonl")
    j.append([outcome("a")])
    with open(j.path, "ab") as fh:
        fh.write(b'{"format": 2, "kind": "query"}\n')  # no query id
        fh.write(b"not json\n")
    j.append([outcome("b")])
    assert [r.query_id for r in j.read()] == ["a", "b"]  # the damaged lines are skipped, the rest read
    assert [p.message.rsplit("/", 1)[1] for p in j.problems] == [
        "journal.jsonl:2: query_id: missing (expected a string)",
        "journal.jsonl:3: not a JSON record: Expecting value: line 1 column 1 (char 0)"]


def test_a_resumed_query_record_replaces_the_earlier_one(tmp_path):
    folder = RunFolder(tmp_path / "run")
    folder.create(EvalSettings(dataset="d"))
    folder.append([outcome("q1", traced=False), outcome("q2")])
    folder.append([outcome("q1", best_score=0.5)])  # searched again on resume
    assert [(o.query_id, o.traced, o.best_score) for o in folder.outcomes()] == [("q2", True, 0.81),
                                                                                ("q1", True, 0.5)]
    assert folder.query("q1").best_score == 0.5


def test_a_newer_or_unknown_format_is_refused_by_name():
    newer = FORMAT_VERSION + 1
    with pytest.raises(DataError, match=rf"j\.jsonl:7: run-folder format {newer} is newer .* upgrade searchtrace"):
        record_from_json({"format": newer, "kind": "query", "query_id": "q"}, "j.jsonl", 7)
    with pytest.raises(DataError, match=r"j\.jsonl:1: format: expected a run-folder format version"):
        record_from_json({"format": "two"}, "j.jsonl", 1)
    with pytest.raises(DataError, match=r"kind: expected query or corrective"):
        record_from_json({"format": 2, "kind": "other"}, "j.jsonl", 1)


def test_format_1_records_read_with_features_by_name():
    v1 = {"query_id": "q", "category": "c", "latency_ms": {"total": 2.0}, "ranking": [["d1", 1.5]],
          "results": [{"doc_id": "d1", "relevance": 0.5, "band": "medium", "grade": 1,
                       "features": [0.61, 0.2, 0.0, 1.0, 1.0, 0.3, 0.05]}],
          "bestScore": 0.5, "noConfidentResults": False, "bands": ["medium"], "weak": True, "retryHints": None,
          "degraded": [], "trace_id": "t", "attribution": []}
    record = record_from_json(v1, "journal.jsonl", 1)
    assert isinstance(record, QueryOutcome) and record.kg is None  # written before kg was kept
    assert record.results[0].features == {"dense": 0.61, "keyword": 0.2, "graph": 0.0, "fused": 1.0, "rank": 1.0,
                                          "coverage": 0.3, "unknown": 0.05}
    fix = record_from_json({"corrective_of": "q", "chosen": "original", "ranking": [], "bestScore": 0.5,
                            "added_ms": 0.0, "tried": []}, "journal.jsonl", 2)
    assert isinstance(fix, CorrectiveOutcome) and fix.corrective_of == "q"


def test_format_1_summary_reads_and_round_trips(tmp_path):
    folder = RunFolder.completed(BASELINE)
    summary = folder.summary()
    assert summary.metrics["ndcg@10"] == json.loads((BASELINE / "run.json").read_text())["metrics"]["ndcg@10"]
    assert summary.confidence.band_precision[Band.HIGH].count > 0 and summary.retriever.mode == "graph"
    assert summary.settings == EvalSettings.from_json(json.loads((BASELINE / "run.json").read_text())["settings"], "x")
    again = RunSummary.from_json(json.loads(json.dumps(summary.to_json())), "run.json")
    assert again == summary
    evaluation = folder.evaluation()
    assert evaluation.mean("ndcg@10") == pytest.approx(summary.metrics["ndcg@10"], abs=1e-6)


def test_summaries_record_the_depth_scored_and_older_ones_read_as_scored_then():
    """``scored_depth`` is an additive key: a run written before it scored its depth asked, and a target run
    then was asked for at most 50 results."""
    from dataclasses import replace

    from searchtrace.evals.runs.runfolder import ExternalRun

    data = json.loads((BASELINE / "run.json").read_text())
    assert "scored_depth" not in data
    old = RunSummary.from_json(data, "run.json")
    assert old.depth == old.settings.depth == data["settings"]["top_k"] == 100
    target = {**data, "external": ExternalRun(kind="target", source="http://x").to_json()}
    assert RunSummary.from_json(target, "run.json").depth == 50
    shallow = replace(old, scored_depth=10)
    written = json.loads(json.dumps(shallow.to_json()))
    assert written["scored_depth"] == 10 and written["settings"]["top_k"] == 100
    assert RunSummary.from_json(written, "run.json").depth == 10
    with pytest.raises(DataError, match="scored_depth"):
        RunSummary.from_json({**written, "scored_depth": "10"}, "run.json")


def test_damaged_or_newer_summaries_are_named(tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(BASELINE, copy)
    data = json.loads((copy / "run.json").read_text())
    (copy / "run.json").write_text(json.dumps(data | {"format": 9}))
    with pytest.raises(DataError, match=r"run\.json: run-folder format 9 is newer"):
        RunFolder(copy).summary()
    confidence = data.pop("confidence")
    (copy / "run.json").write_text(json.dumps(data))
    with pytest.raises(DataError, match=r"run\.json: confidence: missing"):
        RunFolder(copy).summary()
    (copy / "run.json").write_text(json.dumps(data | {"confidence": confidence | {"results": "many"}}))
    with pytest.raises(DataError, match=r"confidence\.results: expected an integer"):
        RunFolder(copy).summary()
    (copy / "run.json").write_text('{"run_id": ')
    with pytest.raises(DataError, match=r"run\.json:1: invalid JSON"):
        RunFolder(copy).summary()


def test_run_folder_finds_one_query_and_refuses_unknown_runs(tmp_path):
    home = Home(tmp_path)
    folder = RunFolder(home.run("r1"))
    folder.create(EvalSettings(dataset="d"))
    folder.append([outcome("q-1"), CorrectiveOutcome("q-2", "original", (), 0.1, 0.0), outcome("q-2")])
    assert folder.is_interrupted and not folder.is_complete
    assert folder.query("q-2") == outcome("q-2")  # the corrective record of q-2 is not it
    assert folder.query("q-3") is None
    assert folder.settings() == EvalSettings(dataset="d")
    with pytest.raises(NotFoundError, match="no completed run 'r1'"):
        RunFolder.in_home(home, "r1")
    with pytest.raises(ValidationError, match="run id must be a folder name"):
        RunFolder.in_home(home, "../etc")
    with pytest.raises(NotFoundError, match="not a completed run folder"):
        RunFolder.completed(folder.path)


def test_percentiles_per_stage():
    rows = [{"dense": float(i), "total": 10.0 * i} for i in range(1, 101)]
    out = percentiles(rows)
    assert out["dense"]["p50"] == 50.5 and out["dense"]["n"] == 100
    assert out["total"]["p99"] == round(10 * (1 + 0.99 * 99), 3)


def test_rankings_table_holds_what_run_trec_holds_and_a_damaged_one_is_named(tmp_path):
    import numpy as np

    from searchtrace.evals.runs.trec import read_run
    from searchtrace.evals.scoring.rankings import Run

    rng = np.random.default_rng(7)
    rows = [(f"q{q}", f"d{d}", float(round(s, 2))) for q in range(30)
            for d, s in zip(rng.choice(500, 40, replace=False), rng.random(40))]  # rounded: ties, broken by id
    run = Run.from_arrays(*zip(*rows))
    folder = RunFolder(tmp_path / "run")
    folder.path.mkdir()
    folder.write_run_file(run, tag="t")
    from_table, from_text = folder.rankings(), read_run(folder.run_file)
    assert from_table.to_dict() == from_text.to_dict() == run.to_dict()
    for table in (from_table, from_text):  # the same order, ties included, and scores bit for bit
        assert table.queries[table.query_index].tolist() == run.queries[run.query_index].tolist()
        assert table.docs[table.doc_index].tolist() == run.docs[run.doc_index].tolist()
        assert table.scores.tobytes() == run.scores.tobytes()
    (folder.path / RunFolder.RANKINGS).unlink()  # a run written before the table: run.trec is read
    assert folder.rankings().to_dict() == run.to_dict()
    folder.write_run_file(run, tag="t")
    data = (folder.path / RunFolder.RANKINGS).read_bytes()
    (folder.path / RunFolder.RANKINGS).write_bytes(data[: len(data) // 2])  # torn: detected, never used
    with pytest.raises(DataError, match="rankings.parquet"):
        folder.rankings()
