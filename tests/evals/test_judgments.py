"""Judging a dataset: the scale, standing labels, the judge queue, and ``judge import | export | status``.

Everything that writes works on a copy of ``datasets/sample`` in ``tmp_path``.
"""

from __future__ import annotations

import json
import multiprocessing
import shutil
import time
from collections import Counter
from pathlib import Path

import pytest

from searchtrace.cli import main
from searchtrace.errors import DataError, ValidationError
from searchtrace.evals.labels.judgments import (
    DEFAULT_SCALE,
    JudgingFolder,
    JudgingSession,
    Judgment,
    Kind,
    Scale,
    majority,
    pair_labels,
    standing,
)
from searchtrace.evals.labels.judgments.queue.local import LocalJudgeQueue
from searchtrace.retriever import load_qrels, load_queries

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"
FORK = multiprocessing.get_context("fork")
Q1, Q2 = "test-001", "test-002"
D1, D2, D3 = "bio-orsolya-venn", "gld-lampwrights-guild", "bio-meribel-osk"


@pytest.fixture
def dataset(tmp_path) -> Path:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root)
    return root


def record(session: JudgingSession, *rows: tuple[str, str, int | None, str]) -> None:
    for query_id, doc_id, grade, judge in rows:
        session.record(query_id, doc_id, grade, judge)


# -- the scale -----------------------------------------------------------------------


def test_the_default_scale_is_0_1_2(dataset):
    assert Scale.load(dataset) == DEFAULT_SCALE
    assert DEFAULT_SCALE.describe() == "0 not relevant, 1 relevant, 2 highly relevant"


def test_a_grade_off_the_scale_is_refused_naming_it(dataset):
    session = JudgingSession.open(dataset)
    with pytest.raises(ValidationError, match=r"grade 3 is not on the judging scale \(0 not relevant, 1 relevant"):
        session.record(Q1, D1, 3, "ana")
    assert session.store.read() == ()


def test_the_scale_comes_from_judging_toml(dataset):
    (dataset / "judging.toml").write_text('relevant = 2\n[grades]\n0 = "off"\n1 = "partial"\n2 = "on"\n3 = "perfect"\n')
    session = JudgingSession.open(dataset)
    assert session.scale == Scale(((0, "off"), (1, "partial"), (2, "on"), (3, "perfect")), relevant=2)
    session.record(Q1, D1, 3, "ana")
    with pytest.raises(ValidationError, match="grade -1 is not on the judging scale"):
        session.record(Q1, D1, -1, "ana")


@pytest.mark.parametrize("text, message", [
    ("[grades]\nhigh = 'x'\n", "grades: 'high' is not an integer grade"),
    ("relevant = 5\n", "relevant: expected one of the grades, got 5"),
    ("scale = 1\n", "unknown keys scale"),
    ("[grades\n", "not TOML"),
])
def test_a_bad_scale_file_is_named(dataset, text, message):
    (dataset / "judging.toml").write_text(text)
    with pytest.raises(DataError, match=f"judging.toml: {message}"):
        Scale.load(dataset)


# -- standing labels ------------------------------------------------------------------


def test_a_judges_later_judgment_supersedes_and_a_retraction_removes():
    rows = [Judgment(Q1, D1, 2, "ana"), Judgment(Q1, D1, 0, "bo"), Judgment(Q1, D1, 1, "ana"),
            Judgment(Q1, D2, 2, "ana"), Judgment(Q1, D2, None, "ana")]
    assert {key: j.grade for key, j in standing(rows).items()} == {((Q1, D1), "ana"): 1, ((Q1, D1), "bo"): 0}
    assert [(p.pair, p.grades) for p in pair_labels(rows)] == [((Q1, D1), (("ana", 1), ("bo", 0)))]


def test_a_retracted_pair_can_be_judged_again():
    rows = [Judgment(Q1, D1, 2, "ana"), Judgment(Q1, D1, None, "ana"), Judgment(Q1, D1, 0, "ana")]
    assert [p.grades for p in pair_labels(rows)] == [(("ana", 0),)]


@pytest.mark.parametrize("grades, expected", [([2, 2, 0], 2), ([0, 1, 1], 1), ([2, 0], 0), ([1, 2, 1, 2], 1),
                                              ([0, 1, 2], 0), ([2], 2)])
def test_majority_ties_go_to_the_lower_grade(grades, expected):
    assert majority(grades) == expected


# -- the judge queue -------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_two_judges_never_get_the_same_pair_and_a_hold_expires(dataset):
    clock = Clock()
    folder = JudgingFolder.at(dataset)
    session = JudgingSession(LocalJudgeQueue(folder.queue_file, folder.store(), clock), folder.scale())
    pool = [(Q1, D1), (Q1, D2), (Q2, D3)]
    assert session.next_pair("ana", pool, ttl=60) == (Q1, D1)
    assert session.next_pair("ana", pool, ttl=60) == (Q1, D1)  # asking again gives back the pair held
    clock.now += 30
    assert session.next_pair("bo", pool, ttl=60) == (Q1, D2)
    clock.now += 31  # ana walked away: her hold ran out, bo's did not
    assert session.next_pair("cy", pool, ttl=60) == (Q1, D1)
    assert session.queue.held() == {(Q1, D1): "cy", (Q1, D2): "bo"}


def test_a_judged_pair_is_not_handed_out_again(dataset):
    session = JudgingSession.open(dataset)
    pool = [(Q1, D1), (Q1, D2)]
    pair = session.next_pair("ana", pool)
    session.record(*pair, 1, "ana")
    assert session.queue.held() == {}  # judging it let it go
    assert session.next_pair("bo", pool) == (Q1, D2)
    assert session.next_pair("ana", pool) is None  # bo holds the other one
    assert session.next_pair("cy", pool, judges_per_pair=2) == (Q1, D1)  # a second judge wanted on each


def _judge_until_done(dataset: Path, judge: str, pool: list[tuple[str, str]], start) -> None:
    session = JudgingSession.open(dataset)
    start.wait()
    while (pair := session.next_pair(judge, pool, ttl=120)) is not None:
        time.sleep(0.002)  # a judge reads the document: the other process asks meanwhile
        session.record(*pair, len(pair[1]) % 3, judge)


def test_two_processes_judging_through_the_judge_queue_never_share_a_pair_and_lose_none(dataset):
    docs = [json.loads(line)["_id"] for line in (dataset / "corpus.jsonl").read_text().splitlines()][:200]
    pool = [(f"q{i}", d) for i in range(5) for d in docs]  # 1,000 pairs: about 500 judgments each (issue 25)
    assert len(pool) == 1000
    start = FORK.Event()
    workers = [FORK.Process(target=_judge_until_done, args=(dataset, judge, pool, start)) for judge in ("ana", "bo")]
    for w in workers:
        w.start()
    start.set()
    for w in workers:
        w.join(120)
        assert w.exitcode == 0
    stored = JudgingSession.open(dataset).store.read()
    assert sorted(j.pair for j in stored) == sorted(pool)  # every pair judged, and judged once: never held by both
    by_judge = Counter(j.judge for j in stored)
    assert set(by_judge) == {"ana", "bo"} and min(by_judge.values()) >= 250, by_judge  # both judged at once


def test_next_pair_refuses_a_bad_ttl(dataset):
    with pytest.raises(ValidationError, match="ttl must be > 0"):
        JudgingSession.open(dataset).next_pair("ana", [(Q1, D1)], ttl=0)


# -- export -----------------------------------------------------------------------------


def test_export_writes_one_grade_per_pair_by_majority_ties_lower(dataset, capsys):
    session = JudgingSession.open(dataset)
    record(session, (Q1, D1, 2, "ana"), (Q1, D1, 2, "bo"), (Q1, D1, 0, "cy"),  # majority 2
           (Q1, D2, 2, "ana"), (Q1, D2, 1, "bo"),  # tie: the lower, 1
           (Q2, D3, 0, "cy"), (Q2, D3, 2, "cy"))  # cy changed their mind: 2
    session.record(Q2, "gaz-skerrow-isles", 1, "bo", kind=Kind.IMPLICIT)  # not a human judgment: left out
    assert main(["judge", "export", str(dataset), "--split", "judged"]) == 0
    written = dataset / "qrels" / "judged.tsv"
    assert written.read_text().splitlines() == ["query-id\tcorpus-id\tscore", f"{Q1}\t{D1}\t2", f"{Q1}\t{D2}\t1",
                                                f"{Q2}\t{D3}\t2"]
    assert load_qrels(written) == {Q1: {D1: 2, D2: 1}, Q2: {D3: 2}}
    out = capsys.readouterr().out
    assert "Fleiss' kappa" in out and "Krippendorff's alpha" in out and "disagreements: 2 pairs" in out


def test_export_of_one_judge_and_the_refusal_to_overwrite(dataset, capsys):
    session = JudgingSession.open(dataset)
    record(session, (Q1, D1, 2, "ana"), (Q1, D1, 0, "bo"), (Q1, D2, 1, "bo"))
    args = ["judge", "export", str(dataset), "--split", "test"]
    before = (dataset / "qrels" / "test.tsv").read_bytes()
    assert main(args) == 2
    assert "qrels/test.tsv exists; give --force" in capsys.readouterr().err
    assert (dataset / "qrels" / "test.tsv").read_bytes() == before
    assert main([*args, "--judge", "bo", "--force"]) == 0
    assert load_qrels(dataset / "qrels" / "test.tsv") == {Q1: {D1: 0, D2: 1}}
    assert "agreement" not in capsys.readouterr().out
    assert main([*args, "--judge", "zed", "--force"]) == 2
    err = capsys.readouterr().err
    assert "no human judgment by 'zed'" in err and err.rstrip().endswith("judges: ana, bo")


def test_export_of_two_judges_reports_cohens_kappa(dataset, capsys):
    session = JudgingSession.open(dataset)
    record(session, (Q1, D1, 2, "ana"), (Q1, D1, 2, "bo"), (Q1, D2, 0, "ana"), (Q1, D2, 1, "bo"),
           (Q2, D3, 1, "ana"), (Q2, D3, 1, "bo"))
    assert main(["judge", "export", str(dataset), "--split", "two"]) == 0
    out = capsys.readouterr().out
    # p_o = 2/3; ana 0,1,2 and bo 1,1,2 -> p_e = (1/3)(0) + (1/3)(2/3) + (1/3)(1/3) = 1/3
    assert f"Cohen's kappa         {(2 / 3 - 1 / 3) / (1 - 1 / 3):.3f}" in out
    assert "Fleiss" not in out
    disputed = [line.split() for line in out.splitlines() if line.startswith("  test-")]
    assert disputed == [[Q1, D2, "ana", "0,", "bo", "1"]]


def test_export_refuses_a_split_that_is_no_file_name(dataset, capsys):
    JudgingSession.open(dataset).record(Q1, D1, 1, "ana")
    assert main(["judge", "export", str(dataset), "--split", "../escape"]) == 2
    assert "split '../escape'" in capsys.readouterr().err
    assert not (dataset / "escape.tsv").exists()


# -- import -------------------------------------------------------------------------------


def test_import_reads_trec_and_beir_qrels_as_imported_judgments(dataset, tmp_path, capsys):
    trec = tmp_path / "old.qrels"
    trec.write_text(f"{Q1} 0 {D1} 2\n{Q2} 0 {D3} 0\n")
    assert main(["judge", "import", str(dataset), str(trec)]) == 0
    assert main(["judge", "import", str(dataset), str(SAMPLE / "qrels" / "dev.tsv"), "--judge", "dev-labels"]) == 0
    stored = JudgingSession.open(dataset).store.read()
    assert [(j.pair, j.grade, j.judge, j.kind) for j in stored[:2]] == [
        ((Q1, D1), 2, "old.qrels", Kind.IMPORTED), ((Q2, D3), 0, "old.qrels", Kind.IMPORTED)]
    dev = {(j.query_id, j.doc_id): j.grade for j in stored[2:]}
    assert dev == {(q, d): g for q, docs in load_qrels(SAMPLE / "qrels" / "dev.tsv").items() for d, g in docs.items()}
    assert {j.judge for j in stored[2:]} == {"dev-labels"}


@pytest.mark.parametrize("lines, line, message", [
    (f"{Q1} 0 {D1} 1\nnope 0 {D1} 1\n", 2, "unknown query id 'nope'"),
    (f"{Q1} 0 {D1} 1\n{Q1} 0 {D2} 1\n{Q2} 0 missing-doc 1\n", 3, "unknown doc id 'missing-doc'"),
    (f"{Q1} 0 {D1} 7\n", 1, "grade 7 is not on the judging scale"),
    (f"{Q1} 0 {D1} 1\n{Q1} 0 {D2}\n", 2, "expected 4 whitespace-separated fields"),
    (f"{Q1} 0 {D1} 1\n{Q1} 0 {D1} 2\n", 2, "duplicate"),
    (f"query-id\tcorpus-id\tscore\n{Q1}\t{D1}\t1\n{Q1}\tother\t1\n", 3, "unknown doc id 'other'"),
])
def test_import_refuses_a_bad_line_naming_it_and_writes_nothing(dataset, tmp_path, capsys, lines, line, message):
    bad = tmp_path / "bad.qrels"
    bad.write_text(lines)
    assert main(["judge", "import", str(dataset), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {bad}:{line}: ") and message in err and len(err.splitlines()) == 1
    assert not (dataset / "judgments.jsonl").exists()


@pytest.mark.parametrize("stage", ["write", "fsync"])
def test_import_on_a_full_disk_writes_nothing_and_names_itself(dataset, tmp_path, capsys, monkeypatch, stage):
    """ENOSPC halfway through the write (or at the fsync): the file is cut back to what it held, a torn
    line of an earlier killed writer aside, and the one line names judge import and the file, not eval."""
    import errno
    import os

    from searchtrace.evals.labels.judgments.store import jsonl

    first = tmp_path / "first.qrels"
    first.write_text(f"{Q1} 0 {D1} 2\n")
    assert main(["judge", "import", str(dataset), str(first)]) == 0
    store = dataset / "judgments.jsonl"
    before = store.read_bytes()
    with store.open("ab") as torn:
        torn.write(b'{"format": 1, "query_id"')  # a writer killed mid-line: never read, cut by the next append
    real_write, real_fsync = jsonl._write, os.fsync

    def half_then_full(fd: int, payload: bytes) -> None:
        real_write(fd, payload[: len(payload) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    def full_fsync(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    if stage == "write":
        monkeypatch.setattr(jsonl, "_write", half_then_full)
    else:
        monkeypatch.setattr(jsonl.os, "fsync", full_fsync)
    capsys.readouterr()
    assert main(["judge", "import", str(dataset), str(SAMPLE / "qrels" / "dev.tsv")]) == 1
    err = capsys.readouterr().err
    assert err == (f"error: No space left on device ({store}), judge import wrote nothing: free some space "
                   "and run `searchtrace judge import` again\n")
    assert store.read_bytes() == before
    monkeypatch.setattr(jsonl.os, "fsync", real_fsync)
    assert [(j.pair, j.grade) for j in JudgingSession.open(dataset).store.read()] == [((Q1, D1), 2)]


def test_import_to_a_store_out_of_reach_names_itself(dataset, tmp_path, capsys):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    qrels = tmp_path / "old.qrels"
    qrels.write_text(f"{Q1} 0 {D1} 2\n")
    assert main(["judge", "import", str(dataset), str(qrels), "--store",
                 f"postgresql://judge:secret@127.0.0.1:{port}/team"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: judge import wrote nothing: store postgresql://judge:****@127.0.0.1:")
    assert "secret" not in err and len(err.splitlines()) == 1 and not (dataset / "judgments.jsonl").exists()


# -- status -------------------------------------------------------------------------------


def test_status_counts_pairs_relevant_and_judges_per_query(dataset, capsys):
    session = JudgingSession.open(dataset)
    record(session, (Q1, D1, 2, "ana"), (Q1, D1, 0, "bo"), (Q1, D2, 1, "bo"), (Q2, D3, 0, "ana"),
           (Q2, D1, 1, "ana"), (Q2, D1, None, "ana"))
    session.record(Q2, D2, 2, "clicks", kind=Kind.IMPLICIT)
    assert main(["judge", "status", str(dataset), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    texts = {q.id: q.text for q in load_queries(dataset / "queries.jsonl")}
    assert report["queries"] == [  # no pool.jsonl: nothing counted left
        {"query_id": Q1, "text": texts[Q1], "pairs": 2, "relevant": 1, "left": None,
         "judges": ["ana", "bo"]},  # D1: 2 vs 0 -> 0; D2: 1
        {"query_id": Q2, "text": texts[Q2], "pairs": 2, "relevant": 1, "left": None,
         "judges": ["ana", "clicks"]}]  # D1 retracted
    assert report["totals"] == {"queries": 2, "pairs": 4, "relevant": 2, "left": None,
                                "judges": ["ana", "bo", "clicks"],
                                "by_kind": {"human": 4, "implicit": 1, "imported": 0}}


def test_status_of_a_dataset_without_judgments(dataset, capsys):
    assert main(["judge", "status", str(dataset)]) == 0
    assert capsys.readouterr().out == f"no judgments in {dataset / 'judgments.jsonl'}\n"


def test_a_missing_dataset_folder_is_exit_2(tmp_path, capsys):
    assert main(["judge", "status", str(tmp_path / "nowhere")]) == 2
    assert "no dataset folder" in capsys.readouterr().err


def test_judging_is_timed_in_utc(dataset):
    before = time.time()
    judged = JudgingSession.open(dataset).record(Q1, D1, 1, "ana")
    assert judged.time.utcoffset().total_seconds() == 0 and before <= judged.time.timestamp() <= time.time()


# -- the session's tally: the store read incrementally, never stale -------------------------


def test_the_tally_follows_appends_retractions_and_other_processes(dataset):
    from searchtrace.evals.labels.judgments.tally import Tally

    session = JudgingSession.open(dataset)
    tally = Tally(session.store).refresh()
    assert len(tally) == 0
    record(session, (Q1, D1, 2, "ana"), (Q1, D1, 0, "bo"), (Q1, D2, 1, "ana"))
    tally.refresh()
    assert tally.human_judges((Q1, D1)) == {"ana", "bo"}
    assert [(p.pair, p.grades) for p in tally.shared()] == [((Q1, D1), (("ana", 2), ("bo", 0)))]
    other = JudgingSession.open(dataset)  # another process's session
    other.record(Q1, D1, None, "bo")
    other.store.append([Judgment(Q1, D2, 2, "qrels", Kind.IMPORTED)])
    tally.refresh()
    assert tally.human_judges((Q1, D1)) == {"ana"} and tally.label((Q1, D1), "bo") is None
    assert tally.human_judges((Q1, D2)) == {"ana"} and tally.label((Q1, D2), "qrels").grade == 2
    assert sorted(j.pair for j in tally.standing()) == sorted(j.pair for j in standing(session.store.read()).values())


def test_next_pair_sees_a_store_replaced_under_a_running_session(dataset):
    session = JudgingSession.open(dataset)
    pool = [(Q1, D1), (Q1, D2)]
    record(session, (Q1, D1, 1, "ana"))
    assert session.next_pair("ana", pool) == (Q1, D2)
    session.queue.release("ana")
    replacement = dataset / "restored.jsonl"  # judgments.jsonl restored from a copy that lacks ana's judgment
    replacement.write_text(json.dumps(Judgment(Q1, D2, 0, "ana").to_json()) + "\n")
    replacement.rename(dataset / "judgments.jsonl")
    assert session.next_pair("ana", pool) == (Q1, D1)


def test_a_judgment_of_a_document_the_dataset_lacks_is_refused_and_nothing_written(dataset):
    """Issue 25, bad input: the document is named; a query id may be live traffic's, not in queries.jsonl."""
    session = JudgingSession.open(dataset)
    with pytest.raises(ValidationError, match="unknown document 'nowhere'"):
        session.record(Q1, "nowhere", 1, "ada")
    assert session.store.read() == ()
    assert session.record("q0123456789abcdef", D1, 1, "ada").grade == 1  # a traffic query's id
