"""The README's "Running a team's searchtrace", as written: its lines run against a server of the module's own;
a store asked for TLS it lacks, or never migrated, is one line saying what to do."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from searchtrace.cli import migrations

README = Path(__file__).resolve().parents[2] / "README.md"
PASSWORD = "team-pw-7"
SSL_REFUSED = "does not support SSL"

VERSION = len(migrations())  # the shared store's schema: one version a migration step


def team_blocks() -> list[list[str]]:
    """The command lines (comments and blank lines left out) of each bash block of the team section."""
    text = README.read_text(encoding="utf-8")
    start = text.index("### Running a team's searchtrace")
    section = text[start:text.index("\n## ", start)]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    return [[line for line in block.splitlines() if line.strip() and not line.startswith("#")] for block in blocks]


def searchtrace(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "searchtrace", *args], capture_output=True, text=True,
                          env=env, timeout=120)


def base_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG") and k != "SEARCHTRACE_STORE"}
    return env | {"SEARCHTRACE_HOME": str(tmp_path / "home")}


def one_line_naming_tls(result: subprocess.CompletedProcess[str]) -> str:
    lines = result.stderr.splitlines()
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    assert SSL_REFUSED in lines[0] and "sslmode=disable" in lines[0]
    assert "WARNING" not in result.stderr and "pool" not in result.stderr.lower()
    return lines[0]


def test_the_readme_team_block_runs_as_written(stoppable_postgres, tmp_path):
    server = stoppable_postgres
    first, remote = team_blocks()
    at = next(i for i, line in enumerate(first) if line.startswith("export "))
    setup, local = first[:at], first[at:]
    assert setup[:2] == ["apt-get install -y postgresql", "service postgresql start"]
    # Checked, not run: the package is what the tests' servers come from, and service is where it starts one.
    from postgres_server import binaries

    assert binaries() is not None and shutil.which("service") and Path("/etc/init.d/postgresql").is_file()
    if os.geteuid() != 0:
        pytest.skip("runuser needs root (the README's not-root lines use sudo)")
    # As written, on the module's server: its socket folder and port in libpq's variables.
    env = base_env(tmp_path) | {"PGHOST": str(server.folder), "PGPORT": str(server.port)}
    for line in setup[2:]:
        done = subprocess.run(shlex.split(line), env=env, input=f"{PASSWORD}\n{PASSWORD}\n", capture_output=True,
                              text=True, timeout=60, start_new_session=True)  # no terminal: --pwprompt reads stdin
        assert done.returncode == 0, (line, done.stderr)
    # The local URL, with the password chosen and the module server's port for 5432.
    [export, *commands] = local
    url = re.fullmatch(r"export SEARCHTRACE_STORE='(.*)'", export)[1]  # type: ignore[index]
    url = url.replace("PASSWORD", PASSWORD).replace(":5432/", f":{server.port}/")
    env = base_env(tmp_path) | {"SEARCHTRACE_STORE": url}
    assert commands == ["searchtrace store migrate", "searchtrace store status"]
    migrated = searchtrace(*shlex.split(commands[0])[1:], env=env)
    assert migrated.returncode == 0, migrated.stderr
    status = searchtrace(*shlex.split(commands[1])[1:], env=env)
    assert status.returncode == 0 and f"schema       version {VERSION} (this searchtrace: {VERSION})" in status.stdout
    assert "CREATE EXTENSION" in setup[-1] and not status.stderr
    # The remote form against this server, which has no TLS: one line saying so, and which URL a local one takes.
    [export] = remote
    far = re.fullmatch(r"export SEARCHTRACE_STORE='(.*)'", export)[1]  # type: ignore[index]
    assert urlsplit(far).query == "sslmode=require"
    near = far.replace("PASSWORD", PASSWORD).replace("db.example:5432", f"127.0.0.1:{server.port}")
    one_line_naming_tls(searchtrace("store", "status", env=base_env(tmp_path) | {"SEARCHTRACE_STORE": near}))


@pytest.mark.parametrize("command", [("store", "status"), ("runs", "list"), ("traces", "list")])
def test_sslmode_require_against_a_server_without_tls_is_one_line(pg_url, tmp_path, command):
    line = one_line_naming_tls(searchtrace(*command, "--store", f"{pg_url}?sslmode=require", env=base_env(tmp_path)))
    assert line.startswith("error: store postgresql://") and urlsplit(pg_url).password not in line


@pytest.mark.parametrize("command", [("store", "status"), ("runs", "list"), ("traces", "list")])
def test_a_store_never_migrated_names_the_command_that_migrates_it(pg_url, tmp_path, command):
    from searchtrace.database import StoreUrl

    masked = StoreUrl(pg_url).masked()
    result = searchtrace(*command, "--store", pg_url, env=base_env(tmp_path))
    assert result.returncode == (1 if command == ("store", "status") else 2)  # the others: a store they refuse
    assert result.stderr.splitlines() == [
        f"error: store {masked} has no searchtrace schema; this searchtrace needs version {VERSION}: "
        f"run `searchtrace store migrate --store {shlex.quote(masked.replace(':****', ''))}`"]  # to paste: no password
    assert urlsplit(pg_url).password not in result.stderr + result.stdout
