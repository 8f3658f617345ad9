"""Runs in the shared store from the command line: eval --store, runs push/export/list, compare and gate by id,
name or latest:tag, the home's verified cache, and the store down or not migrated."""

from __future__ import annotations

import json
import shutil
import socket
from datetime import UTC, datetime
from pathlib import Path

import pytest
from run_folders import QRELS, make_run, trec_text, with_journal

from searchtrace.cli import main
from searchtrace.database import Database, StoreUrl
from searchtrace.evals import RunFolder
from searchtrace.evals.runs.runindex.cache import cache_folder
from searchtrace.home import Home

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
JAN, MAR = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 3, 1, tzinfo=UTC)


def _password(url: str) -> str:
    return url.split(":")[2].split("@")[0]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def store(pg_url, capsys):
    assert main(["store", "migrate", "--store", pg_url]) == 0
    capsys.readouterr()
    return pg_url


@pytest.fixture(autouse=True)
def no_env_store(monkeypatch, tmp_path):
    monkeypatch.delenv("SEARCHTRACE_STORE", raising=False)
    monkeypatch.setenv("SEARCHTRACE_HOME", str(tmp_path / "home"))


def test_push_export_and_compare_show_no_difference_bit_for_bit(store, tmp_path, capsys):
    original = make_run(tmp_path / "src", "run-a", tags=("main",), name="first", created=JAN)
    capsys.readouterr()
    assert main(["runs", "push", str(original.path), "--store", store]) == 0
    out = capsys.readouterr().out
    assert " ".join(out.split()).replace("store: ", "store ").startswith("run run-a published to store postgresql://")
    assert _password(store) not in out and all(len(line) <= 80 for line in out.splitlines())
    assert main(["runs", "push", str(original.path), "--store", store]) == 0
    assert "run run-a already in store" in capsys.readouterr().out
    exported = tmp_path / "exported"
    assert main(["runs", "export", "run-a", "--out", str(exported), "--store", store]) == 0
    capsys.readouterr()
    names = sorted(p.name for p in original.path.iterdir())
    assert sorted(p.name for p in exported.iterdir()) == names
    for name in names:  # run.trec and rankings.parquet included: rebuilt from the store's rows
        assert (exported / name).read_bytes() == (original.path / name).read_bytes(), name
    assert main(["compare", str(original.path), str(exported), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["shared"] == 6 and report["only_in_base"] == report["only_in_candidate"] == 0
    for metric, row in report["metrics"].items():
        assert row["delta"] == 0 and row["wins"] == row["losses"] == 0, metric
    assert main(["runs", "export", "run-a", "--out", str(exported), "--store", store]) == 2
    assert "already exists" in capsys.readouterr().err


@pytest.mark.parametrize("damage, named", [
    (lambda p: (p / "run.trec").unlink(), "run.trec: missing"),
    (lambda p: (p / "per_query.parquet").write_bytes(b"PAR1 torn"), "per_query.parquet"),
    (lambda p: (p / "settings.json").write_text("{"), "settings.json"),
    (lambda p: (p / "run.json").unlink(), "run.json"),
    (lambda p: (p / "journal.jsonl").write_text("{not a record\n"), "journal.jsonl: not recorded in run.json"),
    (lambda p: (p / "rankings.parquet").write_bytes(b"torn"), "rankings.parquet"),
    (lambda p: (p / "run.trec").write_text("q0 Q0 d0a 1 not-a-score t\n"), "run.trec"),
])
def test_a_damaged_or_incomplete_folder_is_refused_naming_the_file(store, tmp_path, capsys, damage, named):
    folder = make_run(tmp_path / "src", "run-d")
    damage(folder.path)
    capsys.readouterr()
    assert main(["runs", "push", str(folder.path), "--store", store]) == 2
    err = capsys.readouterr().err
    assert named in err and err.count("\n") == 1
    assert main(["runs", "list", "--store", store]) == 0
    assert capsys.readouterr().out == ""  # nothing of it was published


def test_list_by_tag_newest_first_fits_the_width(store, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    for run_id, seed, tags, when in (("run-old", 0, ("main",), JAN), ("run-new", 1, ("main", "x" * 90), MAR),
                                     ("run-dev", 2, ("dev",), MAR)):
        folder = make_run(tmp_path / "src", run_id, seed=seed, tags=tags, name=f"{run_id} name", created=when)
        assert main(["runs", "push", str(folder.path), "--store", store]) == 0
    capsys.readouterr()
    assert main(["runs", "list", "--tag", "main", "--store", store]) == 0
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert [line.split()[2] for line in lines] == ["run-new", "run-old"]
    assert lines[1] == "2026-01-01 00:00  run-old  run-old name  [main]"
    assert all(len(line) <= 80 for line in lines) and lines[0].endswith("…")
    assert out.err.startswith("2 runs with tag 'main' in store") and _password(store) not in out.err


def test_gate_against_the_newest_run_with_a_tag_from_another_home(store, tmp_path, capsys, monkeypatch):
    old = make_run(tmp_path / "src", "base-old", seed=2, tags=("main",), created=JAN)  # better than seed 0
    new = make_run(tmp_path / "src", "base-new", seed=0, tags=("main",), created=MAR)
    for folder in (new, old):  # pushed out of order: newest is made last, not pushed last
        assert main(["runs", "push", str(folder.path), "--store", store]) == 0
    shutil.rmtree(tmp_path / "src" / "base-new")  # the baseline now lives only in the store
    candidate = make_run(tmp_path / "cand", "cand", seed=0)
    home = Home(tmp_path / "other-home")
    (tmp_path / "gate.toml").write_text('[metrics."ndcg@10"]\nmax_drop = 0.01\nrequire_significance = false\n')
    argv = ["gate", "--baseline", "latest:tag=main", "--candidate", str(candidate.path), "--store", store,
            "--home", str(home.root), "--config", str(tmp_path / "gate.toml")]
    capsys.readouterr()
    assert main(argv) == 0  # the same rankings as base-new: no regression
    cached = RunFolder(cache_folder(home, "base-new"))
    assert cached.is_complete and not cache_folder(home, "base-old").exists()
    assert main([*argv[:2], "base-old", *argv[3:]]) == 1  # against the older baseline, a regression
    (cached.path / "per_query.parquet").write_bytes(b"torn")  # a damaged cache is never read
    (cached.path / "run.json").unlink()
    assert main(argv) == 0
    assert cached.is_complete and cached.summary().run_id == "base-new"
    assert main(["compare", "base-new", "cand", "--store", store, "--home", str(home.root), "--json"]) == 2
    assert "cand" in capsys.readouterr().err  # 'cand' is no path here and no run of the store
    assert main(["compare", "base-new", str(candidate.path), "--store", store, "--home", str(home.root),
                 "--json"]) == 0
    assert all(row["delta"] == 0 for row in json.loads(capsys.readouterr().out)["metrics"].values())


@pytest.mark.parametrize("asked, says", [("latest:tag=nope", "no run with tag 'nope' in store postgresql://"),
                                         ("ghost", "no run id or name 'ghost' in store postgresql://")])
def test_an_unknown_run_is_one_line_naming_it_and_the_masked_store_exit_2(store, tmp_path, capsys, asked, says):
    candidate = make_run(tmp_path / "cand", "cand")
    capsys.readouterr()
    for argv in (["gate", "--baseline", asked, "--candidate", str(candidate.path)],
                 ["compare", asked, str(candidate.path)], ["runs", "export", asked, "--out", str(tmp_path / "x")]):
        assert main([*argv, "--store", store]) == 2
        err = capsys.readouterr().err
        assert says in err and _password(store) not in err and "****" in err and err.count("\n") == 1


def test_without_a_store_ids_names_and_tags_are_the_homes_runs(tmp_path, capsys):
    home = Home(tmp_path / "home")
    make_run(home.runs, "home-run", tags=("main",), created=JAN)
    candidate = make_run(tmp_path / "cand", "cand")
    capsys.readouterr()
    assert main(["gate", "--baseline", "latest:tag=main", "--candidate", str(candidate.path)]) == 0
    assert not home.cache.exists()  # a home's run is read in place
    assert main(["compare", "latest:tag=dev", str(candidate.path)]) == 2
    err = capsys.readouterr().err
    assert "latest:tag=dev: no such run folder, and no run with tag 'dev' in home" in err


def test_eval_with_the_store_down_finishes_its_folder_and_says_how_to_push_it(store, tmp_path, capsys):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "in.trec").write_text(trec_text(0))
    down = f"postgresql://team:hunter2@127.0.0.1:{_closed_port()}/db?connect_timeout=1"
    out = tmp_path / "run-down"
    code = main(["eval", "--run", str(tmp_path / "in.trec"), "--qrels", str(tmp_path / "qrels.txt"),
                 "--out", str(out), "--store", down])
    err = capsys.readouterr().err
    assert code == 1 and RunFolder(out).is_complete
    masked = down.replace("hunter2", "****")
    assert "hunter2" not in err
    lines = err.splitlines()
    said = next(i for i, line in enumerate(lines) if line.startswith("run not published: "))
    later = next(i for i, line in enumerate(lines) if line.startswith("publish it later:"))
    assert " ".join(lines[said:later]).replace("   ", " ").startswith(f"run not published: store {masked} is "
                                                                     "unreachable")
    command = " ".join(line.strip().removesuffix("\\").strip() for line in lines[later:])
    bare = down.replace(":hunter2", "")  # pasted as it is, the password comes from $PGPASSWORD, never as ****
    assert command == f"publish it later: searchtrace runs push {out} --store '{bare}'"  # wrapped to the width
    assert main(["runs", "push", str(out), "--store", store]) == 0  # the command works once the store is up
    assert "run run-down published to" in capsys.readouterr().out


def test_eval_publishes_to_the_store_from_the_environment(store, tmp_path, capsys, monkeypatch):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "in.trec").write_text(trec_text(1))
    monkeypatch.setenv("SEARCHTRACE_STORE", store)
    assert main(["eval", "--run", str(tmp_path / "in.trec"), "--qrels", str(tmp_path / "qrels.txt"),
                 "--out", str(tmp_path / "run-env")]) == 0
    assert "run run-env published to store" in capsys.readouterr().err
    assert main(["runs", "list"]) == 0
    assert "run-env" in capsys.readouterr().out


def test_a_store_without_the_runs_schema_says_to_migrate(pg_url, tmp_path, capsys):
    folder = make_run(tmp_path / "src", "run-m")
    capsys.readouterr()
    assert main(["runs", "push", str(folder.path), "--store", pg_url]) == 2
    err = capsys.readouterr().err
    assert "has no searchtrace schema" in err and "run `searchtrace store migrate --store" in err
    db = Database(StoreUrl(pg_url))
    try:
        with db.connection() as conn:
            assert conn.execute("SELECT to_regclass('st_runs')").fetchone()[0] is None
    finally:
        db.close()


def test_runs_push_without_a_store_says_how_to_give_one(tmp_path, capsys):
    folder = make_run(tmp_path / "src", "run-n")
    capsys.readouterr()
    assert main(["runs", "push", str(folder.path)]) == 2
    assert "pass --store postgresql://" in capsys.readouterr().err


def test_cache_folder_is_keyed_by_a_plain_run_id(tmp_path):
    home = Home(tmp_path)
    assert cache_folder(home, "r-1") == home.cache / "runs" / "r-1"
    with pytest.raises(Exception, match="run id must be a folder name"):
        cache_folder(home, "../escape")
    assert Path(home.cache / "runs") == cache_folder(home, "x").parent


@pytest.mark.slow
def test_an_eval_publishes_its_run_and_another_home_gates_against_its_tag(store, tmp_path, capsys, sample_config,
                                                                        sample_index_path):
    out = tmp_path / "sample-run"
    assert main(["eval", str(SAMPLE), "--home", str(sample_config.home.root), "--out", str(out),
                 "--mode", "fast", "--tag", "main", "--no-progress", "--store", store]) == 0
    assert "run sample-run published to store" in capsys.readouterr().err
    original = RunFolder(out)
    assert (out / "journal.jsonl").is_file()
    other = Home(tmp_path / "ci-runner")
    assert main(["gate", "--baseline", "latest:tag=main", "--candidate", str(out), "--store", store,
                 "--home", str(other.root)]) == 0
    cached = cache_folder(other, "sample-run")
    for p in original.path.iterdir():  # the journal too, byte for byte
        assert (cached / p.name).read_bytes() == p.read_bytes(), p.name
    assert RunFolder(cached).outcomes() == original.outcomes()
    db = Database(StoreUrl(store))
    try:
        with db.connection() as conn:
            kept = dict(conn.execute("SELECT name, content IS NOT NULL FROM st_run_files").fetchall())
    finally:
        db.close()
    assert kept == {"journal.jsonl": True, "per_query.parquet": True, "results.parquet": True, "run.json": True,
                    "settings.json": True, "run.trec": False, "rankings.parquet": False}  # rankings: rows only
    from searchtrace.traces import PostgresTraceStore, TraceFilter

    traces = PostgresTraceStore(Database(StoreUrl(store)))  # the eval's traces went to the store too
    stored = traces.list_traces(TraceFilter(run_id="sample-run", limit=None))
    assert len(stored) == len(original.outcomes()) and all(t.source == "eval" for t in stored)
    traces.db.close()


def test_concurrent_readers_of_one_store_run_share_one_whole_cache_folder(store, tmp_path, capsys):
    import threading

    from searchtrace.evals.runs.runindex import resolve_run

    original = make_run(tmp_path / "src", "run-c", tags=("main",))
    assert main(["runs", "push", str(original.path), "--store", store]) == 0
    home = Home(tmp_path / "reader-home")
    folders: list[Path] = []
    errors: list[BaseException] = []

    def read() -> None:
        try:
            folders.append(resolve_run("latest:tag=main", StoreUrl(store), home).path)
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=read) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and set(folders) == {cache_folder(home, "run-c")}
    assert sorted(p.name for p in (home.cache / "runs").iterdir()) == ["run-c"]  # no temporary folder left
    for p in original.path.iterdir():
        assert (cache_folder(home, "run-c") / p.name).read_bytes() == p.read_bytes()


def _plant(store: str, run_id: str, name: str, content: bytes = b"planted\n") -> None:
    """A row of the shared store naming a run's file ``name``, written straight with SQL (as anyone with write access could)."""
    import hashlib

    db = Database(StoreUrl(store))
    try:
        with db.connection() as conn:
            conn.execute("INSERT INTO st_run_files (run_id, name, sha256, size, content) VALUES (%s, %s, %s, %s, %s)",
                         (run_id, name, hashlib.sha256(content).hexdigest(), len(content), content))
    finally:
        db.close()


def _hostile_names(tmp_path: Path) -> list[str]:
    return ["../../../../escaped-via-cache.txt", str(tmp_path / "escaped-absolute.txt"),
            "..\\..\\escaped-backslash.txt", "x" * 300, "sub/../../escaped-nested.txt", "."]


@pytest.mark.parametrize("which", range(6))
def test_a_hostile_file_name_in_the_store_is_refused_by_gate_and_export_and_written_nowhere(store, tmp_path, capsys,
                                                                                            which):
    name = _hostile_names(tmp_path)[which]
    base = make_run(tmp_path / "src", "base", tags=("main",), created=JAN)
    candidate = make_run(tmp_path / "cand", "cand")
    assert main(["runs", "push", str(base.path), "--store", store]) == 0
    _plant(store, "base", name)
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    home = tmp_path / "h1" / "h2" / "home"  # the cache's ../../../.. stays in tmp_path, to be seen
    (tmp_path / "gate.toml").write_text('[metrics."ndcg@10"]\nmax_drop = 0.01\nrequire_significance = false\n')
    capsys.readouterr()
    code = main(["gate", "--baseline", "latest:tag=main", "--candidate", str(candidate.path), "--store", store,
                 "--home", str(home), "--config", str(tmp_path / "gate.toml")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "file name" in err and repr(name)[:40] in err
    out = tmp_path / "o1" / "o2" / "o3" / "exported"
    assert main(["runs", "export", "base", "--out", str(out), "--store", store]) == 2
    err = capsys.readouterr().err
    assert "file name" in err and repr(name)[:40] in err
    assert not out.exists()
    made = sorted(str(p) for p in tmp_path.rglob("*") if str(p) not in before)
    assert not [p for p in made if "escaped" in p or "x" * 300 in p], made
    assert not list(tmp_path.parent.glob("escaped*"))


def _tear_the_journals_last_line(p: Path) -> None:
    journal = p / "journal.jsonl"
    journal.write_bytes(journal.read_bytes() + b'{"query_id": "q2", "ran')  # killed mid-write


def _edit_a_field(p: Path) -> None:
    data = json.loads((p / "run.json").read_text())
    data["metrics"]["ndcg@10"] = 0.99
    (p / "run.json").write_text(json.dumps(data, indent=2))


def _damage_inside(path: Path) -> None:
    import random

    data = bytearray(path.read_bytes())
    start = len(data) // 2 - 32
    data[start:start + 64] = random.Random(0).randbytes(64)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage, named", [
    (lambda p: _damage_inside(p / "per_query.parquet"), "per_query.parquet"),
    (lambda p: _damage_inside(p / "rankings.parquet"), "rankings.parquet"),
    (_tear_the_journals_last_line, "journal.jsonl"),
    (_edit_a_field, "run.json"),
])
def test_push_refuses_a_folder_that_does_not_verify_and_publishes_nothing(store, tmp_path, capsys, damage, named):
    folder = with_journal(make_run(tmp_path / "src", "run-a", tags=("main",)))
    damage(folder.path)
    capsys.readouterr()
    assert main(["runs", "push", str(folder.path), "--store", store]) == 2
    err = capsys.readouterr().err.strip()
    assert named in err and "\n" not in err
    assert main(["runs", "list", "--store", store]) == 0
    assert "run-a" not in capsys.readouterr().out
