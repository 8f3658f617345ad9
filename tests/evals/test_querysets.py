"""``searchtrace queries from-traces``: filters, de-duplication, sampling, the folder written, bad input."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from trace_fixtures import MS, T0, FakeSearch, record

from searchtrace.cli import main
from searchtrace.evals.labels.querysets import QueryOrigin, read_info, successive_inclusion
from searchtrace.home import Home
from searchtrace.retriever import dataset_fingerprint, load_dataset
from searchtrace.traces import CaptureConfig, TraceStore

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
S = 1000 * MS
HIGH, MEDIUM, LOW = (("d1", "high", 0.8),), (("d2", "medium", 0.5),), (("d3", "low", 0.2),)


def store_traffic(home: Path, *searches: FakeSearch, capture: CaptureConfig = CaptureConfig()) -> list[str]:
    """Emulated searches written to the home's trace store; their trace ids."""
    spans, ids = record(*searches, capture=capture)
    store = TraceStore(Home(home).traces)
    store.write(spans)
    store.close()
    return ids


def from_traces(out: Path, home: Path, *options: str) -> int:
    return main(["queries", "from-traces", str(out), "--dataset", str(SAMPLE), "--home", str(home), "--no-progress",
                 *options])


def written(out: Path) -> dict[str, tuple[str, QueryOrigin]]:
    """The query set's queries by text: (id, origin), read back through the BEIR loader."""
    return {q.text: (q.id, QueryOrigin.of(q)) for q in load_dataset(out, need_queries=True).queries}


# -- filters ------------------------------------------------------------------------

TRAFFIC = [  # (query, what it searched and how it went); every query text is its own
    FakeSearch(query="http graph high", source="http", dataset="sample", start_ns=T0, results=HIGH + MEDIUM + LOW),
    FakeSearch(query="mcp fast medium", source="mcp", dataset="sample", mode="fast", start_ns=T0 + S,
               results=MEDIUM + LOW),
    FakeSearch(query="cli graph low", source="cli", dataset="sample", start_ns=T0 + 2 * S, results=LOW,
               no_confident=True),
    FakeSearch(query="python fast nothing", source="python", dataset="sample", mode="fast", start_ns=T0 + 3 * S,
               results=(), no_confident=True),
    FakeSearch(query="eval graph high", source="eval", dataset="sample", start_ns=T0 + 4 * S, results=HIGH),
    FakeSearch(query="http other dataset", source="http", dataset="other", start_ns=T0 + 5 * S, results=HIGH),
    FakeSearch(query="http graph medium late", source="http", dataset="sample", start_ns=T0 + 6 * S,
               results=MEDIUM),
]


def best_band(s: FakeSearch) -> str | None:
    return next((b for b in ("high", "medium", "low") if any(r[1] == b for r in s.results)), None)


def iso(ns: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ns / 1e9, tz=UTC).isoformat()


TRAFFIC_SOURCES = {"http", "mcp", "cli", "python"}
FILTERS = [
    ([], lambda s: True),
    (["--source", "http"], lambda s: s.source == "http"),
    (["--source", "mcp", "--source", "cli"], lambda s: s.source in ("mcp", "cli")),
    (["--mode", "fast"], lambda s: s.mode == "fast"),
    (["--band", "high"], lambda s: best_band(s) == "high"),
    (["--band", "medium"], lambda s: best_band(s) == "medium"),
    (["--band", "low"], lambda s: best_band(s) == "low"),
    (["--no-confident"], lambda s: s.no_confident),
    (["--confident"], lambda s: not s.no_confident),
    (["--since", iso(T0 + 2 * S)], lambda s: s.start_ns >= T0 + 2 * S),
    (["--until", iso(T0 + 2 * S)], lambda s: s.start_ns < T0 + 2 * S),
    (["--since", iso(T0 + S), "--until", iso(T0 + 6 * S), "--mode", "graph"],
     lambda s: T0 + S <= s.start_ns < T0 + 6 * S and s.mode == "graph"),
]


@pytest.fixture(scope="module")
def traffic_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("traffic")
    store_traffic(home, *TRAFFIC)
    return home


@pytest.mark.parametrize("options, wanted", FILTERS, ids=[" ".join(o) or "defaults" for o, _ in FILTERS])
def test_each_filter_picks_the_searches_it_names(traffic_home, tmp_path, options, wanted, capsys):
    expected = {s.query for s in TRAFFIC if s.dataset == "sample" and s.source in TRAFFIC_SOURCES and wanted(s)}
    assert expected  # every case picks something, so a filter ignored would show
    assert from_traces(tmp_path / "out", traffic_home, *options) == 0
    assert set(written(tmp_path / "out")) == expected
    assert read_info(tmp_path / "out").searches == len(expected)


def test_no_matching_search_is_one_line_naming_the_filters_and_writes_nothing(traffic_home, tmp_path, capsys):
    code = from_traces(tmp_path / "out", traffic_home, "--source", "mcp", "--band", "high", "--since", "2h",
                       "--no-confident")
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "no searches of dataset 'sample' match (source mcp, since " in err
    assert "band high, no-confident) in " in err and err.strip().endswith(": nothing written")
    assert not (tmp_path / "out").exists()


# -- de-duplication, counts, ids -------------------------------------------------------


def test_queries_are_deduplicated_by_case_and_spacing_keeping_the_first_spelling(tmp_path, capsys):
    home = tmp_path / "home"
    later, first, last, other = store_traffic(
        home,  # written out of time order: "first" started first
        FakeSearch(query="Which river?", source="http", dataset="sample", start_ns=T0 + 2 * S),
        FakeSearch(query="which   RIVER? ", source="mcp", dataset="sample", start_ns=T0 + S),
        FakeSearch(query="WHICH\triver?", source="cli", dataset="sample", start_ns=T0 + 3 * S),
        FakeSearch(query="Which rivers?", source="http", dataset="sample", start_ns=T0 + 4 * S))
    assert from_traces(tmp_path / "out", home) == 0
    got = written(tmp_path / "out")
    assert set(got) == {"which   RIVER? ", "Which rivers?"}
    river_id, river = got["which   RIVER? "]
    assert (river.count, river.trace_ids, river.inclusion_probability) == (3, (first, later, last), 1.0)
    assert river_id == "q" + hashlib.sha256(b"which river?").hexdigest()[:16]
    assert got["Which rivers?"][1].trace_ids == (other,)
    lines = (tmp_path / "out" / "queries.jsonl").read_text().splitlines()
    assert [json.loads(line)["text"] for line in lines] == ["which   RIVER? ", "Which rivers?"]  # most asked first


def test_a_query_has_the_same_id_in_every_query_set(traffic_home, tmp_path, capsys):
    assert from_traces(tmp_path / "all", traffic_home) == 0
    assert from_traces(tmp_path / "http", traffic_home, "--source", "http") == 0
    everything, http = written(tmp_path / "all"), written(tmp_path / "http")
    assert http and all(everything[text][0] == ident for text, (ident, _) in http.items())


# -- sampling ------------------------------------------------------------------------

COUNTS = {"alpha": 5, "beta": 4, "gamma": 3, "delta": 2, "epsilon": 1, "zeta": 1}


@pytest.fixture(scope="module")
def counted_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("counted")
    searches = [FakeSearch(query=text, source="http", dataset="sample", start_ns=T0 + (10 * i + k) * S)
                for i, (text, count) in enumerate(COUNTS.items()) for k in range(count)]
    store_traffic(home, *searches)
    return home


def test_sample_all_takes_every_query_with_its_count(counted_home, tmp_path, capsys):
    assert from_traces(tmp_path / "out", counted_home, "--sample", "all") == 0
    got = written(tmp_path / "out")
    assert {t: o.count for t, (_, o) in got.items()} == COUNTS
    assert {o.inclusion_probability for _, o in got.values()} == {1.0}
    info = read_info(tmp_path / "out")
    assert (info.sampling, info.n, info.distinct, info.queries, info.searches) == ("all", None, 6, 6, 16)


def test_sample_top_takes_the_most_asked(counted_home, tmp_path, capsys):
    assert from_traces(tmp_path / "out", counted_home, "--sample", "top", "--n", "3") == 0
    got = written(tmp_path / "out")
    assert {t: (o.count, o.inclusion_probability) for t, (_, o) in got.items()} == {
        "alpha": (5, 1.0), "beta": (4, 1.0), "gamma": (3, 1.0)}


def test_sample_random_is_uniform_and_seeded(counted_home, tmp_path, capsys):
    picks = []
    for seed in ("1", "1", "2"):
        out = tmp_path / f"out-{len(picks)}"
        assert from_traces(out, counted_home, "--sample", "random", "--n", "3", "--seed", seed) == 0
        got = written(out)
        assert len(got) == 3 and {o.inclusion_probability for _, o in got.values()} == {3 / 6}
        assert all(o.count == COUNTS[t] for t, (_, o) in got.items())
        picks.append(set(got))
    assert picks[0] == picks[1]
    assert read_info(tmp_path / "out-2").seed == 2


def test_sample_frequency_writes_rosens_probabilities(counted_home, tmp_path, capsys):
    assert from_traces(tmp_path / "out", counted_home, "--sample", "frequency", "--n", "2", "--seed", "5") == 0
    got = written(tmp_path / "out")
    approx = dict(zip(COUNTS, successive_inclusion(np.array(list(COUNTS.values()), dtype=float), 2)))
    assert len(got) == 2
    assert {t: o.inclusion_probability for t, (_, o) in got.items()} == {t: approx[t] for t in got}


def test_asking_for_more_than_there_are_takes_all_with_certainty(counted_home, tmp_path, capsys):
    assert from_traces(tmp_path / "out", counted_home, "--sample", "frequency", "--n", "50") == 0
    assert "asked for 50, all there are: 6 distinct queries in 16 searches" in capsys.readouterr().out
    assert {o.inclusion_probability for _, o in written(tmp_path / "out").values()} == {1.0}


# -- queries not captured ---------------------------------------------------------------


def test_searches_without_their_query_text_are_counted_never_guessed(tmp_path, capsys):
    home = tmp_path / "home"
    store_traffic(home, FakeSearch(query="kept", source="http", dataset="sample", start_ns=T0))
    store_traffic(home, *(FakeSearch(query="secret", source="http", dataset="sample", start_ns=T0 + i * S)
                          for i in (1, 2)), capture=CaptureConfig(capture_query=False))
    assert from_traces(tmp_path / "out", home) == 0
    out = capsys.readouterr().out.splitlines()
    assert set(written(tmp_path / "out")) == {"kept"}
    assert [line for line in out if "query text" in line] == [
        "2 searches recorded no query text (SEARCHTRACE_CAPTURE_QUERY=0): not used"]
    assert (read_info(tmp_path / "out").uncaptured, read_info(tmp_path / "out").searches) == (2, 3)


def test_only_uncaptured_searches_is_an_error(tmp_path, capsys):
    home = tmp_path / "home"
    store_traffic(home, FakeSearch(query="secret", source="mcp", dataset="sample"),
                  capture=CaptureConfig(capture_query=False))
    assert from_traces(tmp_path / "out", home) == 2
    assert "1 searches of dataset 'sample' match" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


# -- the folder ----------------------------------------------------------------------


def test_the_folder_links_the_corpus_and_loads_as_the_same_data(traffic_home, tmp_path, capsys):
    out = tmp_path / "out"
    assert from_traces(out, traffic_home) == 0
    assert sorted(p.name for p in out.iterdir()) == ["corpus.jsonl", "queries.jsonl", "queryset.json",
                                                     "triples.jsonl"]
    for name in ("corpus.jsonl", "triples.jsonl"):
        assert (out / name).is_symlink() and (out / name).readlink() == (SAMPLE / name).resolve()
    assert dataset_fingerprint(out) == dataset_fingerprint(SAMPLE)  # the index key reads the same bytes
    data, source = load_dataset(out), load_dataset(SAMPLE, need_queries=False)
    assert data.docs == source.docs and data.triples == source.triples and data.name == "out"
    assert (data.split, data.qrels) == (None, {})
    assert read_info(out).dataset == str(SAMPLE.resolve())


def test_output_fits_the_width(traffic_home, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "40")
    out = tmp_path / ("a-long-folder-name-for-the-query-set-" * 3)
    assert from_traces(out, traffic_home) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and all(len(line) <= 40 for line in lines) and lines[0].endswith("…")


def test_reading_shows_progress(traffic_home, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SEARCHTRACE_PROGRESS_SECONDS", "0")
    assert from_traces(tmp_path / "out", traffic_home) == 0
    assert "reading traces: 5/5 traces (100%)" in capsys.readouterr().err


def test_a_folder_not_empty_is_refused_unless_forced(traffic_home, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert from_traces(out, traffic_home) == 2
    assert capsys.readouterr().err.strip() == f"error: {out} is not empty: give --force to replace it"
    assert from_traces(out, traffic_home, "--force") == 0
    assert not (out / "notes.txt").exists() and (out / "queries.jsonl").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # nothing left aside


@pytest.mark.parametrize("options, said", [
    (["--sample", "random"], "--sample random needs --n N"),
    (["--n", "3"], "--n goes with --sample random, frequency or top"),
    (["--sample", "top", "--n", "0"], "--n must be at least 1, got 0"),
    (["--sample", "top", "--n", "2", "--seed", "-1"], "--seed must be 0 or more, got -1"),
    (["--since", "2h", "--until", "3h"], "is not before --until"),
])
def test_bad_options_are_one_line(traffic_home, tmp_path, options, said, capsys):
    assert from_traces(tmp_path / "out", traffic_home, *options) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_every_problem_is_said_together(traffic_home, tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    code = main(["queries", "from-traces", str(tmp_path / "file"), "--dataset", str(tmp_path), "--home",
                 str(traffic_home), "--sample", "top"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "--sample top needs --n N" in err and "no corpus.jsonl there" in err and "is a file" in err


def test_the_dataset_itself_is_never_replaced(traffic_home, tmp_path, capsys):
    assert main(["queries", "from-traces", str(SAMPLE.parent), "--dataset", str(SAMPLE), "--home",
                 str(traffic_home), "--force"]) == 2
    assert "holds the dataset" in capsys.readouterr().err
    assert (SAMPLE / "queries.jsonl").exists()


def test_a_bad_source_or_time_is_said_by_the_parser(traffic_home, tmp_path, capsys):
    for options in (["--source", "eval"], ["--since", "yesterday"]):
        with pytest.raises(SystemExit) as stopped:
            from_traces(tmp_path / "out", traffic_home, *options)
        assert stopped.value.code == 2
    assert "expected an ISO date/time or an age like 30m, 2h, 7d; got 'yesterday'" in capsys.readouterr().err


def test_judgments_carry_over_and_force_never_loses_one(traffic_home, tmp_path, capsys):
    """Labels are keyed by (query id, doc id): those made on the source dataset for the set's queries (judging
    live traffic on the Traces page) are carried into the query set; ``--force`` keeps the set's own."""
    import shutil
    from datetime import UTC, datetime

    from searchtrace.evals.labels.judgments import JsonlStore, Judgment, Kind
    from searchtrace.evals.labels.querysets import query_id

    judged_at = datetime(2026, 11, 25, tzinfo=UTC)
    source = tmp_path / "src" / "sample"  # the traces searched a dataset named sample
    shutil.copytree(SAMPLE, source)
    asked = query_id("http graph high")
    on_source = [Judgment(asked, "d1", 2, "ana", Kind.HUMAN, judged_at, None, None),
                 Judgment(query_id("never asked"), "d1", 1, "ana", Kind.HUMAN, judged_at, None, None)]
    JsonlStore(source / "judgments.jsonl").append(on_source)
    out = tmp_path / "set"
    argv = ["queries", "from-traces", str(out), "--dataset", str(source), "--home", str(traffic_home), "--no-progress"]
    assert main(argv) == 0
    assert JsonlStore(out / "judgments.jsonl").read() == (on_source[0],)  # only the set's queries
    own = Judgment(asked, "d2", 0, "bo", Kind.HUMAN, judged_at, None, None)
    JsonlStore(out / "judgments.jsonl").append([own])
    assert main([*argv, "--force"]) == 0
    assert JsonlStore(out / "judgments.jsonl").read() == (on_source[0], own)  # kept, and nothing twice
    capsys.readouterr()


def test_the_shared_store_gives_the_same_query_set_as_the_home(traffic_home, pg_db, tmp_path, capsys):
    """The same traffic in PostgreSQL (--store) and in the home's file: the same queries, ids and counts."""
    from searchtrace.traces.store.postgres import PostgresTraceStore

    spans, _ = record(*TRAFFIC)
    PostgresTraceStore(pg_db).write(spans)
    empty_home = tmp_path / "elsewhere"
    assert from_traces(tmp_path / "shared", empty_home, "--store", pg_db.url.conninfo) == 0
    assert from_traces(tmp_path / "home", traffic_home) == 0
    def without_trace_ids(out: Path) -> dict:  # the traces were recorded twice: their ids differ
        return {text: (qid, o.count, o.inclusion_probability) for text, (qid, o) in written(out).items()}

    assert without_trace_ids(tmp_path / "shared") == without_trace_ids(tmp_path / "home")
    assert len(written(tmp_path / "shared")) == sum(s.source in TRAFFIC_SOURCES and s.dataset == "sample"
                                                    for s in TRAFFIC)
    assert pg_db.url.conninfo.split(":")[2].split("@")[0] not in capsys.readouterr().out
