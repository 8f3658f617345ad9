"""The searchtrace CLI: exit codes and JSON output."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from searchtrace.cli import main

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"


def test_bad_request_exits_2_before_loading_anything(capsys):
    assert main(["search", "", "--dataset", str(SAMPLE), "--json"]) == 2
    body = json.loads(capsys.readouterr().out)
    assert body["error"]["code"] == "VALIDATION_ERROR" and body["error"]["field"] == "query"
    assert main(["search", "q", "--dataset", str(SAMPLE), "--top-k", "501"]) == 2
    assert "top_k" in capsys.readouterr().err


def test_bad_arguments_exit_2(capsys):
    assert main(["search", "q"]) == 2
    assert capsys.readouterr().err.strip() == ("error: search needs a dataset folder and a query: "
                                                "searchtrace search DATASET QUERY")
    assert main(["search", str(SAMPLE), "q", "--dataset", str(SAMPLE)]) == 2
    assert "the dataset is given twice" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["search", str(SAMPLE), "q", "--top-k", "many"])
    assert info.value.code == 2


def test_search_takes_the_dataset_first_as_every_command_does(sample_index_path, sample_config, capsys):
    """One vocabulary (issue 24): ``search DATASET QUERY`` like ``eval``/``index``/``serve DATASET``;
    ``--dataset`` stays as an alias and answers the same."""
    home = ["--home", str(sample_config.home.root), "--json", "--top-k", "3"]
    assert main(["search", str(SAMPLE), "Who wrote The Waters of Emberly?", *home]) == 0
    positional = json.loads(capsys.readouterr().out)
    assert main(["search", "Who wrote The Waters of Emberly?", "--dataset", str(SAMPLE), *home]) == 0
    option = json.loads(capsys.readouterr().out)
    assert positional["results"] and [r["id"] for r in positional["results"]] == [r["id"] for r in option["results"]]


@pytest.mark.parametrize("flags, needle", [
    (["--weights", "dense=0,keyword=0"], "dense and keyword cannot both be 0"),
    (["--weights", "dense"], "stage=number"),
    (["--fusion", "sum", "--k0", "0"], "fusion method must be one of dbsf, rrf"),
    (["--graph-method", "bfs"], "graph method must be one of ppr, expand"),
    (["--parts-weight", "1.5"], "dense parts_weight must be a number 0-1, got 1.5"),
    (["--graph-seed-docs", "-1"], "graph seed_docs must be an integer 0-20, got -1"),
    (["--graph-seed-weight", "nan"], "graph seed_docs_weight must be a number 0.0-10.0, got nan"),
])
def test_bad_search_settings_exit_2_with_every_problem(tmp_path, capsys, flags, needle):
    assert main(["search", "q", "--dataset", str(SAMPLE), "--home", str(tmp_path), *flags]) == 2
    err = capsys.readouterr().err
    assert needle in err
    if "--k0" in flags:
        assert "k0 must be an integer >= 1" in err


def test_settings_file_flag_and_env(tmp_path, capsys, monkeypatch):
    bad = tmp_path / "bad.toml"
    bad.write_text("[fusion]\nmethod = 'sum'\n", encoding="utf-8")
    monkeypatch.setenv("SEARCHTRACE_RETRIEVER_CONFIG", str(bad))
    assert main(["search", "q", "--dataset", str(SAMPLE), "--home", str(tmp_path)]) == 2
    assert "got 'sum'" in capsys.readouterr().err
    assert main(["search", "q", "--dataset", str(SAMPLE), "--home", str(tmp_path),
                 "--retriever-config", str(tmp_path / "absent.toml")]) == 2
    assert "absent.toml: cannot read" in capsys.readouterr().err


def test_malformed_dataset_names_file_and_line(tmp_path, capsys):
    (tmp_path / "corpus.jsonl").write_text('{"_id": "a", "title": "", "text": "ok"}\n{not json\n')
    (tmp_path / "queries.jsonl").write_text('{"_id": "q", "text": "x"}\n')
    assert main(["datasets", "check", str(tmp_path)]) == 2
    assert f"{tmp_path / 'corpus.jsonl'}:2" in capsys.readouterr().err


def test_datasets_check_reports_sample(capsys):
    assert main(["datasets", "check", str(SAMPLE)]) == 0
    assert "documents" in capsys.readouterr().out


@pytest.mark.slow
def test_search_json_end_to_end(tmp_path, warm_cache):
    """The command in a process of its own, on a home with the model and vectors cached (it builds the index)."""
    out = subprocess.run(
        [sys.executable, "-m", "searchtrace", "search", "harbour", "--dataset", str(SAMPLE), "--json",
         "--home", str(warm_cache(tmp_path)), "--top-k", "3", "--mode", "fast", "--no-progress"],
        capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    assert len(body["results"]) == 3 and body["mode"] == "fast"
    assert {"results", "kg", "rewrite_terms", "bestScore", "noConfidentResults", "retryHints", "traceId",
            "mode", "degraded"} <= set(body)


def test_bad_trace_setting_is_a_clear_error_not_a_traceback(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("SEARCHTRACE_MAX_CANDIDATES", "abc")
    assert main(["search", "q", "--dataset", str(SAMPLE), "--home", str(tmp_path)]) == 2
    assert "SEARCHTRACE_MAX_CANDIDATES" in capsys.readouterr().err


def test_datasets_check_says_what_labels_it_has_or_that_it_has_none(tmp_path, capsys):
    import shutil

    assert main(["datasets", "check", str(SAMPLE)]) == 0
    qrels = (SAMPLE / "qrels" / "test.tsv").read_text().splitlines()[1:]
    pairs, queries = len(qrels), len({row.split("\t")[0] for row in qrels})
    out = capsys.readouterr().out.splitlines()
    assert f"labels: {pairs:,} judged pairs of {queries} queries, in qrels/test.tsv" in out
    unlabelled = tmp_path / "unlabelled"
    shutil.copytree(SAMPLE, unlabelled, ignore=shutil.ignore_patterns("qrels"))
    assert main(["datasets", "check", str(unlabelled)]) == 0
    out = capsys.readouterr().out
    assert "None" not in out and "0 judgments" not in out  # it said "0 judgments (None)"
    assert "labels: none (no qrels/*.tsv;" in out


@pytest.mark.parametrize("argv, spelt", [
    (["search", str(SAMPLE), "q", "--top", "3"], "--top"),  # --top-k
    (["gate", "--baseline", "a", "--candidate", "b", "--conf", "g.toml"], "--conf"),  # --config
    (["judge", "pool", str(SAMPLE), "--runs", "r", "--dep", "10"], "--dep"),  # --depth
])
def test_an_option_is_taken_only_as_spelt(argv, spelt, capsys):
    # A prefix of an option is a typo, not the option: a README command that drifts fails its test.
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert f"unrecognized arguments: {spelt}" in capsys.readouterr().err
