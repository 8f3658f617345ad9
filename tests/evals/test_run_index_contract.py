"""One contract, both run indexes: a home's run folders and the shared store on PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from run_folders import make_run

from searchtrace.errors import NotFoundError, ValidationError
from searchtrace.evals.runs.store import (
    HomeRunIndex,
    PostgresRunIndex,
    RunIndex,
    RunSelector,
    read_snapshot,
)
from searchtrace.home import Home

JAN, FEB, MAR = (datetime(2026, m, 1, 12, tzinfo=UTC) for m in (1, 2, 3))


@pytest.fixture(params=["home", "postgres"])
def index(request: pytest.FixtureRequest, tmp_path) -> RunIndex:
    if request.param == "home":
        return HomeRunIndex(Home(tmp_path / "home"))
    return PostgresRunIndex(request.getfixturevalue("pg_db"))


@pytest.fixture
def made(tmp_path):
    """Three runs: two tagged main (January, then March), one tagged dev (February), two of one name."""
    src = tmp_path / "src"
    return {"old": make_run(src, "run-old", seed=0, tags=("main",), name="nightly", created=JAN),
            "dev": make_run(src, "run-dev", seed=1, tags=("dev", "exp"), name="nightly", created=FEB),
            "new": make_run(src, "run-new", seed=2, tags=("main",), name="release", created=MAR)}


@pytest.fixture
def published(index, made):
    for folder in made.values():
        assert index.publish(read_snapshot(folder)) is True
    return index


def test_implements_the_protocol(index):
    assert isinstance(index, RunIndex)
    assert index.entries() == []


def test_lists_newest_first_and_by_tag(published):
    assert [e.run_id for e in published.entries()] == ["run-new", "run-dev", "run-old"]
    assert [e.run_id for e in published.entries("main")] == ["run-new", "run-old"]
    assert [e.run_id for e in published.entries("nope")] == []
    entry = published.entries("exp")[0]
    assert (entry.run_id, entry.name, entry.tags, entry.created_at) == ("run-dev", "nightly", ("dev", "exp"), FEB)
    assert entry.mode == "external" and entry.dataset == "qrels.txt"


def test_publishing_the_same_run_again_changes_nothing(published, made):
    assert published.publish(read_snapshot(made["old"])) is False
    assert len(published.entries()) == 3


def test_another_run_under_a_taken_id_is_refused(published, tmp_path):
    other = make_run(tmp_path / "other", "run-old", seed=5, tags=("main",), created=MAR)
    with pytest.raises(ValidationError, match="another run with id 'run-old'"):
        published.publish(read_snapshot(other))
    assert published.find(RunSelector(tag="main")).run_id == "run-new"  # the refused run left no trace


def test_finds_by_id_by_newest_of_a_name_and_by_newest_with_a_tag(published):
    assert published.find(RunSelector.parse("run-old")).run_id == "run-old"
    assert published.find(RunSelector.parse("nightly")).run_id == "run-dev"
    assert published.find(RunSelector.parse("latest:tag=main")).run_id == "run-new"
    assert published.find(RunSelector.parse("latest:tag=dev")).run_id == "run-dev"


@pytest.mark.parametrize("asked, says", [("latest:tag=nope", "no run with tag 'nope' in "),
                                         ("ghost", "no run id or name 'ghost' in "),
                                         ("not a folder name/..", "no run id or name 'not a folder name/..' in ")])
def test_an_unknown_run_names_what_was_asked_and_where(published, asked, says):
    with pytest.raises(NotFoundError) as exc:
        published.find(RunSelector.parse(asked))
    assert exc.value.message == says + published.where


def test_a_run_comes_back_whole_and_bit_for_bit(published, made):
    for folder in made.values():
        original = read_snapshot(folder)
        back = published.snapshot(original.run_id)
        assert [(f.name, f.content) for f in back.files] == [(f.name, f.content) for f in original.files]
        assert back.summary == original.summary and back.trec_tag == original.trec_tag
        assert back.created_at == original.created_at
        a, b = original.rankings, back.rankings
        assert a.queries.tolist() == b.queries.tolist() and a.docs.tolist() == b.docs.tolist()
        assert np.array_equal(a.query_index, b.query_index) and np.array_equal(a.doc_index, b.doc_index)
        assert a.scores.view(np.int64).tolist() == b.scores.view(np.int64).tolist()  # -0.0 and 5e-324 too
        assert sorted(back.metrics) == sorted(original.metrics)
        for metric, (ids, values) in original.metrics.items():
            got = dict(zip(back.metrics[metric][0], back.metrics[metric][1].tolist()))
            assert got == dict(zip(ids, values.tolist()))


def test_files_lists_names_and_hashes_without_content(published, made):
    original = read_snapshot(made["new"])
    listed = published.files("run-new")
    assert [(f.name, f.sha256, f.size) for f in listed] == [(f.name, f.sha256, f.size) for f in original.files]
    assert published.files("ghost") is None
    with pytest.raises(NotFoundError, match="ghost"):
        published.snapshot("ghost")


def test_concurrent_publishers_of_one_run_add_it_once(index, made):
    import threading

    snapshot = read_snapshot(made["old"])
    results: list[bool] = []
    errors: list[BaseException] = []

    def publish() -> None:
        try:
            results.append(index.publish(snapshot))
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=publish) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and sorted(results) == [False] * 5 + [True]
    assert [e.run_id for e in index.entries()] == ["run-old"]
