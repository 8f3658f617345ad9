"""A real PostgreSQL server for tests: Debian's ``postgresql`` package, started in a temporary folder.

``initdb`` makes a cluster in a fresh folder (as the ``postgres`` user when the tests
run as root: initdb refuses root), and the server listens on 127.0.0.1 at a free port,
its socket in the cluster's folder, password authentication for TCP. Each test gets a
database of its own. ``SEARCHTRACE_TEST_POSTGRES`` (a ``postgresql://`` URL of a user
who may create databases) points the same tests at an existing server instead.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

__all__ = ["TEST_POSTGRES", "PostgresServer", "binaries", "skip_reason"]

TEST_POSTGRES = "SEARCHTRACE_TEST_POSTGRES"


def binaries() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl`` (the newest Debian version, else on PATH), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def skip_reason() -> str | None:
    """Why PostgreSQL tests cannot run here, or None."""
    if os.environ.get(TEST_POSTGRES):
        return None
    if binaries() is None:
        return (f"no PostgreSQL: install Debian's postgresql (bash .ci/install-postgres.sh) or set {TEST_POSTGRES} "
                "to a server's URL")
    if os.geteuid() == 0 and not _user_exists("postgres"):
        return "running as root and no postgres user to run initdb as"
    return None


def _user_exists(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """A cluster of its own (``start``/``stop``/``restart`` for fault tests), or the server ``SEARCHTRACE_TEST_POSTGRES``
    names (which cannot be stopped)."""

    def __init__(self, *, durable: bool = False, crash_safe: bool = False) -> None:
        """``durable``: fsync on (for benchmarks); tests run without it, which only an OS crash would notice.
        ``crash_safe``: commits synchronous too, so a server stopped with ``immediate`` (a crash, to PostgreSQL)
        keeps every commit it acknowledged (a probe counting what a crash lost needs it)."""
        self.durable = durable
        self.crash_safe = crash_safe
        self.external = os.environ.get(TEST_POSTGRES) or None
        self.folder: Path | None = None
        self.port = 0
        self.password = secrets.token_hex(8)
        self._made = 0

    @property
    def admin_url(self) -> str:
        if self.external:
            return self.external
        return f"postgresql://postgres:{self.password}@127.0.0.1:{self.port}/postgres"

    def _as_owner(self) -> list[str]:
        return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    def setup(self) -> PostgresServer:
        if self.external:
            return self
        bindir = binaries()
        assert bindir is not None
        self.folder = Path(tempfile.mkdtemp(prefix="searchtrace-pg-"))
        pwfile = self.folder / "pw"
        pwfile.write_text(self.password + "\n")
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
            shutil.chown(pwfile, "postgres", "postgres")
        self.port = _free_port()
        subprocess.run([*self._as_owner(), str(bindir / "initdb"), "-D", str(self.folder / "data"), "-U", "postgres",
                        "--pwfile", str(pwfile), "--auth-local=trust", "--auth-host=scram-sha-256",
                        "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"],
                       check=True, capture_output=True, text=True)
        self.start()
        return self

    def start(self) -> None:
        if self.external:
            raise RuntimeError(f"a server named by {TEST_POSTGRES} cannot be started or stopped by the tests")
        assert self.folder is not None
        bindir = binaries()
        assert bindir is not None
        speed = "" if self.durable else "-c fsync=off -c full_page_writes=off "
        commits = "on" if self.crash_safe else "off"
        options = (f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 {speed}"
                   f"-c synchronous_commit={commits} -c max_connections=200")
        subprocess.run([*self._as_owner(), str(bindir / "pg_ctl"), "-D", str(self.folder / "data"), "-l",
                        str(self.folder / "log"), "-o", options, "-w", "-t", "60", "start"],
                       check=True, capture_output=True, text=True)

    def stop(self, mode: str = "fast") -> None:
        if self.external:
            raise RuntimeError(f"a server named by {TEST_POSTGRES} cannot be started or stopped by the tests")
        assert self.folder is not None
        bindir = binaries()
        assert bindir is not None
        subprocess.run([*self._as_owner(), str(bindir / "pg_ctl"), "-D", str(self.folder / "data"), "-m", mode,
                        "-w", "-t", "60", "stop"], check=False, capture_output=True, text=True)

    def teardown(self) -> None:
        if self.external or self.folder is None:
            return
        self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)

    def new_database(self) -> str:
        """A fresh, empty database's URL (dropped by :meth:`drop_database`)."""
        import psycopg

        self._made += 1
        name = f"st_test_{os.getpid()}_{self._made}_{secrets.token_hex(3)}"
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        parts = urlsplit(self.admin_url)
        return urlunsplit(parts._replace(path=f"/{name}"))

    def drop_database(self, url: str) -> None:
        import psycopg

        name = urlsplit(url).path.lstrip("/")
        deadline = time.monotonic() + 10
        while True:
            try:
                with psycopg.connect(self.admin_url, autocommit=True) as conn:
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
