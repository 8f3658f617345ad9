"""Every command's human output at 80 columns: no line is longer (issue 24).

Each command runs in-process through ``main`` with ``COLUMNS=80``, its standard
output captured (not a terminal: the width a pipe gets). The one exception is a
line that names a path the command was given or made, whole: cut, it would name
nothing. The ``--help`` of every command and subcommand is found by walking the parser.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest
from trace_fixtures import MS, T0, FakeSearch, record

from searchtrace.cli import build_parser, main
from searchtrace.home import Home
from searchtrace.traces.store.sqlite import TraceStore

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"
BASELINE = REPO / ".ci" / "baseline"
WIDTH = 80


@pytest.fixture(autouse=True)
def columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", str(WIDTH))


def fits(out: str, *whole: object) -> list[str]:
    """``out``'s lines, once none is wider than 80 columns but one naming a path of ``whole`` (and nothing more)."""
    lines = out.splitlines()
    assert lines, "no output"
    for line in lines:
        if len(line) > WIDTH:
            assert any(line.endswith(str(path)) and len(line) - len(str(path)) <= 30 for path in whole), \
                f"{len(line)} columns: {line!r}"
    return lines


def run(capsys, *argv: object, code: int = 0) -> str:
    assert main([str(a) for a in argv]) == code
    return capsys.readouterr().out


# -- --help ------------------------------------------------------------------------


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _commands(sub, (*path, name))
    return found


@pytest.mark.parametrize("command", _commands(build_parser()), ids=lambda c: " ".join(c) or "searchtrace")
def test_help_fits(capsys, command):
    with pytest.raises(SystemExit) as exit_:
        main([*command, "--help"])
    assert exit_.value.code == 0
    fits(capsys.readouterr().out)


# -- traces ------------------------------------------------------------------------


@pytest.fixture
def store_home(tmp_path):
    spans, ids = record(
        FakeSearch(start_ns=T0, run_id="sample-default-20261124T081148-5abcc306b6", query_id="test-001"),
        FakeSearch(start_ns=T0 + 1000 * MS, mode="fast", results=(("d9", "low", 0.1),), no_confident=True,
                   degraded=("graph",), query="Which shipyard town built the vessel Meribel Osk commanded " * 3),
        FakeSearch(start_ns=T0 + 2000 * MS, error_code="VALIDATION_ERROR", query="x" * 300))
    store = TraceStore(Home(tmp_path).traces)
    store.write(spans)
    store.close()
    return tmp_path, ids


def test_traces_list_fits_and_shows_queries_and_results(capsys, store_home):
    home, ids = store_home
    lines = fits(run(capsys, "traces", "list", "--home", home))
    header = re.split(r"\s{2,}", lines[0].strip())
    assert {"trace id", "query", "best"} <= set(header), header  # not only the start and the trace id
    assert "Which shipyard town" in lines[2] and "0.100" in lines[2]
    assert ids[1][:12] in lines[2]


def test_traces_show_fits(capsys, store_home):
    home, ids = store_home
    for trace_id in ids:
        lines = fits(run(capsys, "traces", "show", trace_id, "--home", home))
        assert lines[0].startswith(f"trace {trace_id}")


def test_traces_export_prune_and_repair_messages_fit(capsys, store_home, tmp_path):
    home, _ = store_home
    out = tmp_path / "traces.jsonl"
    assert main(["traces", "export", "--home", str(home), "--out", str(out)]) == 0
    assert len(capsys.readouterr().err.splitlines()) == 1
    fits(run(capsys, "traces", "prune", "--home", home, "--keep-last", "1"))
    fits(run(capsys, "traces", "repair", "--home", home), Home(home).traces)


# -- eval, compare, gate on run files (no model) ----------------------------------------


def _qrels() -> dict[str, list[str]]:
    judged: dict[str, list[str]] = {}
    for line in (SAMPLE / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        query, doc, grade = line.split("\t")
        if int(grade) > 0:
            judged.setdefault(query, []).append(doc)
    return judged


def _run_file(path: Path, worse_every: int) -> Path:
    """A TREC run over the sample's judged queries: relevant documents first, then others; every
    ``worse_every``-th query's list reversed (0: none)."""
    judged = _qrels()
    others = sorted({d for docs in judged.values() for d in docs})
    lines = []
    for i, (query, docs) in enumerate(sorted(judged.items())):
        ranking = docs + [d for d in others if d not in docs][:10]
        if worse_every and i % worse_every == 0:
            ranking = ranking[::-1]
        lines += [f"{query} Q0 {doc} {rank} {100 - rank} run" for rank, doc in enumerate(ranking, 1)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def run_folders(tmp_path_factory):
    """Two run folders scored from run files: a good one and one that loses every 3rd query."""
    root = tmp_path_factory.mktemp("width-runs")
    folders = {}
    for name, worse in (("good", 0), ("worse", 3)):
        folders[name] = root / name
        assert main(["eval", "--run", str(_run_file(root / f"{name}.trec", worse)),
                     "--qrels", str(SAMPLE / "qrels" / "test.tsv"), "--out", str(folders[name]),
                     "--home", str(root / "home")]) == 0
    return folders


def test_eval_of_a_run_file_fits(capsys, run_folders, tmp_path):
    trec = _run_file(tmp_path / "run.trec", 0)
    fits(run(capsys, "eval", "--run", trec, "--qrels", SAMPLE / "qrels" / "test.tsv"), trec)


def test_compare_fits_and_shows_the_most_regressed_queries(capsys, run_folders):
    lines = fits(run(capsys, "compare", run_folders["good"], run_folders["worse"]))
    out = "\n".join(lines)
    assert "most regressed on ndcg@10:" in out  # as the README promises, in a terminal too
    regressed = json.loads(run(capsys, "compare", run_folders["good"], run_folders["worse"], "--json"))
    worst = regressed["metrics"]["ndcg@10"]["most_regressed"]
    assert worst
    for q in worst:
        assert re.search(rf"^  {re.escape(q['query_id'])} +{q['base']:.4f} → {q['candidate']:.4f}  "
                         rf"{q['delta']:+.4f}$", out, re.M), q


def test_gate_prints_plain_text_that_fits_with_one_sign(capsys, run_folders, tmp_path):
    out = run(capsys, "gate", "--baseline", BASELINE, "--candidate", BASELINE, "--config", REPO / ".ci" / "gate.toml")
    fits(out)
    assert "|---" not in out and "| ndcg@10 |" not in out and "###" not in out  # not Markdown
    assert "-0.0000" not in out and "change +0.0000 within max_drop 0.02" in out  # it said "change -0.0000"
    assert out.startswith("quality gate passed")
    failed = run(capsys, "gate", "--baseline", run_folders["good"], "--candidate", run_folders["worse"], code=1)
    fits(failed)
    assert "|" not in failed and "FAIL" in failed and "a drop past max_drop 0.01" in failed


def test_gate_writes_markdown_to_a_file_or_to_stdout_when_asked(capsys, run_folders, tmp_path):
    md = tmp_path / "gate.md"
    text = run(capsys, "gate", "--baseline", BASELINE, "--candidate", BASELINE, "--markdown", md)
    assert "-0.0000" not in md.read_text() and "| +0.0000 |" in md.read_text()  # it said "change -0.0000" beside it
    assert "|---" not in text and md.read_text().startswith("### Quality gate ✅ passed")
    assert "|---|---:|---:|---:|---:|---|---|" in md.read_text()
    for argv in (["--markdown"], ["--markdown", "-"]):
        out = run(capsys, "gate", "--baseline", BASELINE, "--candidate", BASELINE, *argv)
        assert out.startswith("### Quality gate ✅ passed") and "|---" in out and "quality gate passed" not in out


def test_compare_and_gate_without_labels_fit(capsys, run_folders, tmp_path):
    good, worse = run_folders["good"], run_folders["worse"]
    lines = fits(run(capsys, "compare", good, worse, "--no-labels"))
    assert lines[0].startswith("note: queries not checked: no fingerprints")  # a run file's folder has none
    assert any(re.match(r"\d+ shared queries \(0 only in base, 0 only in candidate\)", line) for line in lines)
    assert any(line.startswith("most changed, lowest RBO p=0.9 first") for line in lines)
    assert any(line.startswith("    base: no trace recorded") for line in lines)  # run files: no traces
    assert "no query's ranking changed" in run(capsys, "compare", good, good, "--no-labels")
    config = tmp_path / "gate.toml"
    config.write_text("[overlap]\nmin_mean_rbo = 0.9\nfloor = 0.5\nmax_share_below = 0.1\n")
    failed = fits(run(capsys, "gate", "--baseline", good, "--candidate", worse, "--no-labels", "--config", config,
                      code=1))
    assert failed[0] == "quality gate failed: 2 of 2 rules failed (no labels: rank-biased overlap)"
    passed = fits(run(capsys, "gate", "--baseline", good, "--candidate", good, "--no-labels", "--config", config))
    assert passed[0].startswith("quality gate passed")
    assert main(["gate", "--baseline", str(good), "--candidate", str(worse), "--no-labels"]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1  # the default rules have no [overlap] table


# -- judge (a copy of the sample) ---------------------------------------------------


def test_judge_import_export_and_status_fit(capsys, tmp_path):
    import shutil

    from searchtrace.evals.labels.judgments import JudgingSession

    dataset = tmp_path / "sample"
    shutil.copytree(SAMPLE, dataset)
    fits(run(capsys, "judge", "import", dataset, SAMPLE / "qrels" / "dev.tsv"), dataset / "judgments.jsonl")
    long_query, long_doc = "q-" + "long-query-id-" * 8, "d-" + "a-very-long-document-id-" * 5
    with open(dataset / "corpus.jsonl", "a", encoding="utf-8") as fh:  # record() takes the corpus's documents
        fh.write(json.dumps({"_id": long_doc, "title": "Long", "text": "a document with a long id"}) + "\n")
    session = JudgingSession.open(dataset)
    judges = ("ana", "bo", "cy-" + "with-a-long-name-" * 5)
    for i, judge in enumerate(judges):
        session.record("test-001", "bio-orsolya-venn", i % 3, judge)
        session.record(long_query, long_doc, (i + 1) % 3, judge)
    fits(run(capsys, "judge", "grade", dataset, "test-001", long_doc, "2", "--judge", judges[2]))
    fits(run(capsys, "judge", "grade", dataset, "test-001", long_doc, "--undo", "--judge", judges[2]))
    lines = fits(run(capsys, "judge", "status", dataset), dataset / "judgments.jsonl")
    assert lines[0].split() == ["query", "text", "pairs", "relevant", "left", "judges"]
    assert any(line.startswith("q-long-query-id-") and "…" in line for line in lines)
    out = run(capsys, "judge", "export", dataset, "--split", "judged")
    lines = fits(out, dataset / "qrels" / "judged.tsv")
    assert "disagreements: 2 pairs" in out and sum("…" in line for line in lines) >= 2


def test_judge_implicit_fits(capsys, tmp_path):
    import shutil

    from trace_fixtures import Served, record_served

    from searchtrace.evals.labels.judgments import JudgingSession

    dataset = tmp_path / "sample"
    shutil.copytree(SAMPLE, dataset, ignore=shutil.ignore_patterns("qrels"))
    queries = [json.loads(line) for line in (SAMPLE / "queries.jsonl").read_text().splitlines()]
    docs = [json.loads(line)["_id"] for line in (SAMPLE / "corpus.jsonl").read_text().splitlines()[:30]]
    store = TraceStore(Home(tmp_path).traces)
    for n, query in enumerate(queries[:40]):
        t = T0 + n * 10_000 * MS
        spans, (search,) = record_served(Served(t, shown=tuple(docs[n % 10:n % 10 + 20]), query=query["text"],
                                                session=f"s{n}"))
        store.write(spans)
        store.write(record_served(Served(t + MS * 10, fetched=(docs[n % 10 + n % 3],), follows=search),
                                  Served(t + MS * 20, fetched=(docs[29],), session=f"s{n}"),
                                  Served(t + MS * 30, fetched=(docs[0],), follows=f"{n:032x}"))[0])
    store.close()
    JudgingSession.open(dataset).record(queries[0]["_id"], docs[0], 2, "ana")
    out = run(capsys, "judge", "implicit", dataset, "--home", tmp_path)
    lines = fits(out, Home(tmp_path).traces, dataset / "judgments.jsonl")
    assert "  unknown trace  40 fetches naming 40 traces not in the store: 000000000000, 00…" in lines
    assert any(line.startswith("   1  ") and "█" in line for line in lines)
    assert lines[-1].endswith(str(dataset / "judgments.jsonl"))


# -- the retriever and a real eval (the model) ---------------------------------------


@pytest.mark.slow
def test_index_search_and_datasets_fit(capsys, sample_config, sample_index_path, tmp_path):
    home = sample_config.home.root
    fits(run(capsys, "index", SAMPLE, "--home", home), sample_index_path)
    for query in ("In which shipyard town was the vessel commanded by Meribel Osk constructed?",
                  "quantum chromodynamics of zebras"):  # the second has no confident result: retry hints
        out = run(capsys, "search", query, "--dataset", SAMPLE, "--home", home)
        lines = fits(out)
        assert lines[0].startswith("mode ") and lines[-1].startswith("trace ")
    fits(run(capsys, "datasets", "check", SAMPLE))
    fits(run(capsys, "datasets", "synth", tmp_path / "synth", "--docs", "20"), tmp_path / "synth")


@pytest.mark.slow
def test_eval_summary_and_calibrate_fit(capsys, sample_config, sample_index_path, tmp_path):
    home = sample_config.home.root
    out = run(capsys, "eval", SAMPLE, "--home", home, "--no-progress")
    folder = Path(out.splitlines()[-1].removeprefix("run folder: "))
    lines = fits(out, folder)
    assert lines[0] == f"run {folder.name}" and lines[1].startswith("name: sample")
    assert re.fullmatch(r"sample / test: \d+ judged of \d+ queries", lines[2])
    assert len(folder.name) > 40  # a default run id: the header that was 83 columns
    fits(run(capsys, "calibrate", folder, "--out", tmp_path / "calibration.json"), tmp_path / "calibration.json")


# -- eval --store's lines (issue 36: the publish line was 125 columns) ------------------------------


def test_the_publish_lines_fit_and_never_cut_the_run_id_or_the_url(tmp_path):
    from searchtrace.database import StoreUrl
    from searchtrace.evals.runs.runfolder import RunFolder
    from searchtrace.evals.runs.runindex.publish import not_published_lines, published_lines

    run_id = "sample-default-20261124T081148-5abcc306b6"
    where = "store postgresql://searchtrace:****@db.internal:5432/searchtrace?sslmode=require"
    lines = published_lines(run_id, True, where, WIDTH)
    assert lines == [f"run {run_id} published to store:", f"  {where.removeprefix('store ')}"]
    assert all(len(line) <= WIDTH for line in lines)
    assert published_lines("r1", False, "store postgresql://h/db", WIDTH) == ["run r1 already in store postgresql://h/db"]
    url = StoreUrl("postgresql://searchtrace:hunter2@db.internal:5432/searchtrace?sslmode=require")
    folder = RunFolder(tmp_path / "runs" / run_id)
    lines = not_published_lines(f"store {url.masked()} is unreachable (connection refused); the run's folder "
                                "is kept", folder, url, WIDTH)
    assert all(len(line) <= WIDTH or line.strip().removesuffix(" \\") == str(folder.path) for line in lines), lines
    assert "hunter2" not in "\n".join(lines)
    at = lines.index("publish it later:")
    command = " ".join(line.strip().removesuffix("\\").strip() for line in lines[at + 1:])
    assert command == f"searchtrace runs push {folder.path} --store '{url.unsecret()}'"
