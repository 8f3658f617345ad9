"""Implicit judgments from agents' fetches: the rate by position and COEC by formula, the linking rules, the
grades, and ``judge implicit`` on emulated served traffic (idempotent reruns, human labels untouched,
export on request, agreement with the human labels).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from trace_fixtures import MS, T0, Served, record_served

from searchtrace.cli import main
from searchtrace.evals.labels.implicit.click_grades import ClickThresholds, click_grades
from searchtrace.evals.labels.implicit.clicks import link
from searchtrace.evals.labels.implicit.coec import PairEvidence, pair_evidence, position_ctr
from searchtrace.evals.labels.judgments.scale import DEFAULT_SCALE, Scale
from searchtrace.traces import Fetch, Impression

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
S = 1000 * MS


# -- the rate by position and COEC, by formula ---------------------------------------


def test_position_ctr_is_clicks_over_impressions_smoothed_toward_the_mean():
    ctr = position_ctr(np.array([3, 3, 2, 1]), np.array([1, 1, 2, 3]), min_impressions=1, prior=1.0)
    mean = 4 / 9  # clicks over shown slots
    assert ctr.impressions.tolist() == [4, 3, 2] and ctr.clicks.tolist() == [2, 1, 1]
    assert ctr.mean == pytest.approx(mean) and ctr.depth == 3
    assert ctr.ctr == pytest.approx([(2 + mean) / (4 + 1), (1 + mean) / (3 + 1), (1 + mean) / (2 + 1)])
    assert ctr.raw().tolist() == pytest.approx([2 / 4, 1 / 3, 1 / 2])


def test_sparse_deep_positions_pool_into_one_rate():
    ctr = position_ctr(np.array([4, 4, 2, 1, 1]), np.array([1, 1, 2, 3, 4]), min_impressions=3, prior=2.0)
    mean = 5 / 12
    assert ctr.impressions.tolist() == [5, 3, 2, 2] and ctr.depth == 2
    pooled = (1 + 1 + 2 * mean) / (2 + 2 + 2)
    assert ctr.ctr == pytest.approx([(2 + 2 * mean) / 7, (1 + 2 * mean) / 5, pooled, pooled])


def test_no_click_no_rate_and_no_impression_no_positions():
    assert position_ctr(np.array([2, 1]), np.array([], dtype=int)).ctr.tolist() == [0.0, 0.0]
    assert position_ctr(np.array([], dtype=int), np.array([], dtype=int)).ctr.size == 0


def test_coec_is_clicks_over_the_rates_of_the_positions_shown():
    ctr = position_ctr(np.array([3, 3, 3, 3]), np.array([1, 1, 3]), min_impressions=1, prior=1.0)
    # pair 0 shown at 1, 1, 2; pair 1 shown at 3 and clicked there; pair 2 shown at 1 once, clicked there
    evidence = pair_evidence(np.array([0, 0, 0, 1, 2]), np.array([1, 1, 2, 3, 1]), np.array([0, 1, 2]), ctr, 3)
    c = ctr.ctr
    assert evidence.expected == pytest.approx([c[0] + c[0] + c[1], c[2], c[0]])
    assert evidence.coec == pytest.approx([1 / (2 * c[0] + c[1]), 1 / c[2], 1 / c[0]])
    assert evidence.impressions.tolist() == [3, 1, 1] and evidence.clicks.tolist() == [1, 1, 1]
    assert evidence.coec[1] > evidence.coec[2]  # one click at position 3 earns more than one at position 1


def test_grades_follow_the_stated_thresholds():
    evidence = PairEvidence(clicks=np.array([3, 1, 1, 0, 0, 2]), impressions=np.array([1, 1, 2, 4, 1, 1]),
                            expected=np.array([0.5, 0.8, 2.0, 0.9, 0.1, 0.6]),
                            coec=np.array([6.0, 1.25, 0.5, 0.0, 0.0, 10 / 3]))
    grades, judged = click_grades(evidence, DEFAULT_SCALE, ClickThresholds())
    assert grades.tolist() == [2, 1, 0, 0, 0, 2] and judged.tolist() == [True, True, True, True, False, True]
    _, judged = click_grades(evidence, DEFAULT_SCALE, ClickThresholds(min_impressions=2))
    assert judged.tolist() == [False, False, True, True, False, False]
    four = Scale(((0, "no"), (1, "partly"), (2, "yes"), (3, "exactly")), relevant=2)
    assert click_grades(evidence, four)[0].tolist() == [3, 2, 0, 0, 0, 3]
    with pytest.raises(Exception, match="0 < relevant <= top"):
        ClickThresholds(relevant=4.0, top=3.0)
    with pytest.raises(Exception, match="min_impressions must be a whole number >= 1"):
        ClickThresholds(min_impressions=0)


# -- linking -------------------------------------------------------------------------


def _imp(trace: str, t: int, shown: str, session: str | None = None) -> Impression:
    return Impression(trace, t, session, "q", None, tuple(shown))


def _fetch(trace: str, t: int, ids: str, follows: str | None = None, session: str | None = None) -> Fetch:
    return Fetch(trace, t, session, follows, tuple(ids))


def _clicks(log) -> list[tuple[str, int]]:
    return sorted((log.impressions[i].trace_id, int(p)) for i, p in zip(log.click_impression, log.click_position))


def test_trace_id_wins_then_the_latest_search_of_the_session_that_showed_the_document():
    items = [_imp("s1", 1, "abc", session="A"), _imp("s2", 2, "xbz", session="A"), _imp("s3", 3, "bqr", session="B"),
             _fetch("f1", 4, "b", follows="s1", session="A"),  # named: s1, position 2, not s2 the later one
             _fetch("f2", 5, "b", session="A"),  # the session's latest search showing b: s2, position 2
             _fetch("f3", 6, "a", session="A"),  # s2 did not show a: s1 did, position 1
             _fetch("f4", 7, "bb", session="A"),  # again b after s2: one click, repeats counted
             _fetch("f5", 8, "z", follows="s1"),  # named s1 did not show z
             _fetch("f6", 9, "q")]  # no traceId, no session
    log = link([items[:4], items[4:]], lambda ids: ())
    assert _clicks(log) == [("s1", 1), ("s1", 2), ("s2", 2)]
    c = log.counts
    assert (c.impressions, c.fetches, c.fetched, c.clicks, c.by_trace_id) == (3, 6, 7, 3, 1)
    assert (c.repeats, c.not_shown, c.unattributed, c.unknown_traces, c.not_searches) == (2, 1, 1, 0, 0)


def test_a_named_trace_the_store_lacks_is_counted_never_a_click():
    unknown, other = "a" * 32, "b" * 32
    items = [_imp("s1", 1, "abc", session="A"), _fetch("f1", 2, "a", follows=unknown, session="A"),
             _fetch("f2", 3, "a", follows=unknown), _fetch("f3", 4, "b", follows=other)]
    log = link([items], lambda ids: {other} & set(ids))
    assert _clicks(log) == []  # the named trace wins: no fall back to the session
    c = log.counts
    assert (c.unknown_traces, c.unknown_ids, c.unknown_examples) == (2, 1, (unknown,))
    assert (c.not_searches, c.not_search_ids, c.not_search_examples) == (1, 1, (other,))


def test_a_session_search_after_the_fetch_is_not_followed():
    log = link([[_fetch("f1", 1, "a", session="A"), _imp("s1", 2, "a", session="A")]], lambda ids: ())
    assert _clicks(log) == [] and log.counts.unattributed == 1


# -- judge implicit on emulated traffic --------------------------------------------------


@pytest.fixture
def dataset(tmp_path) -> Path:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns("qrels"))
    return root


def _queries() -> list[dict]:
    return [json.loads(line) for line in (SAMPLE / "queries.jsonl").read_text().splitlines()]


DOCS = [json.loads(line)["_id"] for line in (SAMPLE / "corpus.jsonl").read_text().splitlines()[:12]]


def _traffic(home: Path, rounds: int = 12, offset: int = 0, also: object = None) -> dict[str, str]:
    """Each round, four sample queries searched (ten results each) and what agents fetched after them: the
    first query's DOCS[0] at position 1 and the third's DOCS[2] at position 1 (one fetch in their MCP session),
    the second's DOCS[5] at position 6 (over HTTP, naming the search, twice); the fourth's never. Then one
    fetch naming a trace the store does not hold. Returns the first search's trace id and that unknown id.
    ``also``: another trace store that gets the same spans."""
    from searchtrace.home import Home
    from searchtrace.traces import TraceStore

    q1, q2, q3, q4 = (q["text"] for q in _queries()[:4])
    home_store = TraceStore(Home(home).traces)

    class Both:
        def write(self, spans: list) -> None:
            home_store.write(spans)
            if also is not None:
                also.write(spans)  # type: ignore[attr-defined]

    store = Both()
    first = ""
    for n in range(rounds):
        t = T0 + (offset + n) * 10 * S
        session = f"session-{offset + n}"
        spans, ids = record_served(Served(t, shown=tuple(DOCS[:10]), query=q1, session=session),
                                   Served(t + S, shown=tuple(DOCS[:10]), query=q2.upper(), source="http"),
                                   Served(t + 2 * S, shown=tuple(DOCS[2:12]), query=q3, session=session),
                                   Served(t + 3 * S, shown=tuple(DOCS[1:11]), query=q4, source="http"))
        store.write(spans)
        first = first or ids[0]
        fetches, _ = record_served(Served(t + 4 * S, fetched=(DOCS[0], DOCS[2]), session=session),
                                   Served(t + 5 * S, fetched=(DOCS[5],), follows=ids[1], source="http"),
                                   Served(t + 6 * S, fetched=(DOCS[5],), follows=ids[1], source="http"))
        store.write(fetches)
    unknown = "f" * 32
    store.write(record_served(Served(T0 + 99_999 * S, fetched=(DOCS[1],), follows=unknown, source="http"))[0])
    home_store.close()
    return {"first": first, "unknown": unknown}


def test_judge_implicit_writes_graded_pairs_and_reruns_change_only_what_changed(dataset, tmp_path, capsys,
                                                                             monkeypatch):
    from searchtrace.evals import IMPLICIT_JUDGE, JudgingSession, Kind, implicit_judgments

    monkeypatch.setenv("COLUMNS", "80")
    home = tmp_path / "home"
    made = _traffic(home)
    q1, q2, q3, q4 = (q["_id"] for q in _queries()[:4])
    session = JudgingSession.open(dataset)
    session.record(q1, DOCS[0], 2, "ana")  # a person's labels: never touched, the reference compared with
    session.record(q2, DOCS[5], 1, "ana")
    session.record(q4, DOCS[1], 0, "ana")
    report = implicit_judgments(dataset, home=home)
    c = report.counts
    assert (c.impressions, c.fetches, c.fetched, c.clicks, c.by_trace_id, c.repeats) == (48, 37, 49, 36, 12, 12)
    assert (c.unknown_traces, c.unknown_examples, c.unattributed, c.not_shown) == (1, (made["unknown"],), 0, 0)
    assert report.ctr.clicks[:6].tolist() == [24, 0, 0, 0, 0, 12] and report.ctr.impressions[0] == 48
    mean = 36 / 480
    assert report.ctr.ctr[0] == pytest.approx((24 + mean) / 49) and report.ctr.ctr[5] == pytest.approx(
        (12 + mean) / 49)
    graded = {p.pair: p for p in report.pairs}
    clicked_1, clicked_6 = graded[(q1, DOCS[0])], graded[(q2, DOCS[5])]
    assert (clicked_1.clicks, clicked_1.impressions, clicked_6.clicks, clicked_6.impressions) == (12, 12, 12, 12)
    assert clicked_1.expected == pytest.approx(12 * report.ctr.ctr[0])
    assert clicked_6.coec == pytest.approx(12 / (12 * report.ctr.ctr[5])) and clicked_6.coec > clicked_1.coec
    assert (clicked_1.grade, clicked_6.grade) == (1, 2)  # equal clicks: position 6 earns the top grade
    assert graded[(q3, DOCS[2])].grade == 1
    assert graded[(q4, DOCS[1])].grade == 0  # never clicked at position 1, where 5.9 clicks were expected
    assert (q1, DOCS[1]) not in graded  # never clicked where 0.02 were expected: no judgment
    assert clicked_1.trace_id != made["first"]  # the latest impression's
    stored = JudgingSession.open(dataset).store.read()
    implicit = [j for j in stored if j.kind is Kind.IMPLICIT]
    assert len(implicit) == len(report.pairs) == report.added == report.written
    assert all(j.judge == IMPLICIT_JUDGE and j.note.startswith("coec ") for j in implicit)
    assert report.agreement is not None and report.agreement.pairs == 3
    assert report.agreement.confusion == ((1, 0, 0), (0, 0, 1), (0, 1, 0))  # rows: ana's 0, 1, 2

    again = implicit_judgments(dataset, home=home)  # nothing new: nothing written
    assert (again.added, again.changed, again.unchanged, again.written) == (0, 0, len(report.pairs), 0)
    assert JudgingSession.open(dataset).store.read() == stored

    more = _traffic(home, rounds=12, offset=100)  # twice the traffic: the same grades
    assert more
    assert implicit_judgments(dataset, home=home).written == 0
    fewer = implicit_judgments(dataset, home=home, thresholds=ClickThresholds(min_impressions=20))
    assert fewer.retracted == 0 and fewer.written == 0  # 24 impressions each: still judged
    none = implicit_judgments(dataset, home=home, thresholds=ClickThresholds(min_impressions=100))
    assert none.retracted == len(report.pairs) and none.pairs == ()
    humans = [j for j in JudgingSession.open(dataset).store.read() if j.kind is Kind.HUMAN]
    assert [(j.pair, j.grade) for j in humans] == [((q1, DOCS[0]), 2), ((q2, DOCS[5]), 1), ((q4, DOCS[1]), 0)]

    assert main(["judge", "implicit", str(dataset), "--home", str(home), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert all(len(line) <= 80 for line in out.splitlines()[:-2]), out  # but the store's path, whole
    unknown_line = next(line for line in out.splitlines() if "unknown trace" in line)
    assert unknown_line == "  unknown trace  2 fetches naming 1 trace not in the store: ffffffffffff"
    assert out.splitlines()[-1] == "dry run: nothing written"
    assert "reference \\ implicit" in out and "Cohen's kappa" in out


def test_export_writes_implicit_labels_only_when_asked(dataset, tmp_path, capsys):
    home = tmp_path / "home"
    _traffic(home, rounds=3)
    assert main(["judge", "implicit", str(dataset), "--home", str(home), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["judge", "export", str(dataset), "--split", "people"]) == 2
    assert "no human judgment to export" in capsys.readouterr().err
    assert main(["judge", "export", str(dataset), "--split", "clicks", "--kind", "implicit"]) == 0
    lines = (dataset / "qrels" / "clicks.tsv").read_text().splitlines()
    assert lines[0] == "query-id\tcorpus-id\tscore" and len(lines) > 3


def test_a_dataset_without_served_searches_is_one_line_and_nothing_written(dataset, tmp_path, capsys):
    assert main(["judge", "implicit", str(dataset), "--home", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "no served search of dataset 'sample'" in err
    assert not (dataset / "judgments.jsonl").exists()


def test_json_carries_every_pair_and_the_agreement_with_qrels(dataset, tmp_path, capsys):
    home = tmp_path / "home"
    _traffic(home, rounds=2)
    qrels = tmp_path / "q.tsv"
    q1 = _queries()[0]["_id"]
    qrels.write_text(f"query-id\tcorpus-id\tscore\n{q1}\t{DOCS[0]}\t2\n")
    assert main(["judge", "implicit", str(dataset), "--home", str(home), "--json", "--qrels", str(qrels),
                 "--dry-run"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["judgments"]["written"] == 0 and not (dataset / "judgments.jsonl").exists()
    agreement = report["agreement"]
    assert agreement["reference"] == f"qrels {qrels}"
    judged_q1 = [p for p in report["pairs"] if p["query_id"] == q1]
    assert agreement["pairs"] == len(judged_q1)  # the qrels list q1: its other documents are not relevant
    assert {"clicks", "impressions", "expected", "coec", "grade", "trace_id"} <= set(report["pairs"][0])


def test_the_shared_stores_traffic_gives_the_same_judgments_as_the_homes(dataset, tmp_path, pg_db, capsys):
    """The same served traffic in the home's file and in PostgreSQL: ``judge implicit --store`` reads the store's
    traces (judging into the store too) and grades every pair as the home's traces do."""
    from searchtrace.traces.store.postgres import PostgresTraceStore

    home = tmp_path / "home"
    _traffic(home, also=PostgresTraceStore(pg_db))
    url = pg_db.url.conninfo
    assert main(["judge", "implicit", str(dataset), "--home", str(tmp_path / "empty"), "--store", url, "--json",
                 "--no-progress"]) == 0
    shared = json.loads(capsys.readouterr().out)
    assert main(["judge", "implicit", str(dataset), "--home", str(home), "--json", "--dry-run"]) == 0
    local = json.loads(capsys.readouterr().out)
    assert shared["pairs"] and shared["counts"] == local["counts"]
    assert [(p["query_id"], p["doc_id"], p["grade"]) for p in shared["pairs"]] == [
        (p["query_id"], p["doc_id"], p["grade"]) for p in local["pairs"]]
    assert shared["store"].startswith("postgresql://") and "****" in shared["store"]
    assert not (dataset / "judgments.jsonl").exists()  # the judgments went to the shared store
