"""``searchtrace dashboard``'s door without a server: the exposed address refused before anything starts, the
key kept off the command line, and the hook into Streamlit refusing to serve unguarded when it cannot hold."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest

from searchtrace.cli import main
from searchtrace.dashboard import door
from searchtrace.dashboard.door import Door
from searchtrace.errors import ConfigError, SearchFailed
from searchtrace.guards import BearerAuth, HostCheck


class Exec(BaseException):  # past the CLI's last-resort handler
    """Raised in place of ``os.execve``: the command the dashboard would have become."""


@pytest.fixture
def execs(monkeypatch) -> list[tuple[list[str], dict[str, str]]]:
    made: list[tuple[list[str], dict[str, str]]] = []

    def execve(path: str, argv: list[str], env: dict[str, str]) -> None:
        made.append((list(argv), dict(env)))
        raise Exec(path)

    monkeypatch.setattr(os, "execve", execve)
    return made


def test_an_exposed_address_without_a_key_is_one_line_and_starts_nothing(tmp_path, monkeypatch, capsys, execs):
    monkeypatch.delenv("SEARCHTRACE_API_KEY", raising=False)
    for address in ("0.0.0.0", "10.1.2.3"):
        assert main(["dashboard", "--home", str(tmp_path), "--address", address]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"error: --address: refusing to listen on {address}")
        assert "SEARCHTRACE_API_KEY" in err
    assert execs == []


def test_with_a_key_it_starts_behind_the_door_and_the_key_stays_off_the_command_line(tmp_path, monkeypatch,
                                                                                      execs):
    monkeypatch.setenv("SEARCHTRACE_API_KEY", "s3cret")
    with pytest.raises(Exec):
        main(["dashboard", "--home", str(tmp_path), "--address", "0.0.0.0", "--allowed-hosts", "dash.example"])
    [(argv, env)] = execs
    assert argv[1:5] == ["-m", "searchtrace.dashboard.door", "--allowed-hosts", "dash.example"]
    assert argv[argv.index("--server.address") + 1] == "0.0.0.0"
    assert "s3cret" not in " ".join(argv) and env["SEARCHTRACE_API_KEY"] == "s3cret"


def _guarded_app(monkeypatch, made: Door, address: str | None) -> tuple[Any, Any]:
    """Install ``made`` over a stand-in seam; returns (what Streamlit's server would build, whether it ran)."""
    import importlib

    seam = importlib.import_module(door.SEAM_MODULE)
    monkeypatch.setattr(seam, door.SEAM, lambda runtime: ("streamlit's app", runtime))
    used = door.install(made, lambda: address)
    assert not used()
    return getattr(seam, door.SEAM)("runtime"), used



def test_the_app_streamlit_builds_is_wrapped_in_the_guards(monkeypatch):
    app, used = _guarded_app(monkeypatch, Door(allowed_hosts="dash.example"), "127.0.0.1")
    assert used() and isinstance(app, HostCheck) and app.app == ("streamlit's app", "runtime")
    assert app.hosts == {"dash.example"} and app.open_paths == door.OPEN_PATHS
    app, _ = _guarded_app(monkeypatch, Door(api_key="k"), "0.0.0.0")
    assert isinstance(app, HostCheck) and isinstance(app.app, BearerAuth) and app.app.key == b"k"


def test_an_exposed_address_is_refused_when_the_app_is_built(monkeypatch):
    for address in ("0.0.0.0", None):  # None: Streamlit's default, every interface
        with pytest.raises(ConfigError, match="SEARCHTRACE_API_KEY"):
            _guarded_app(monkeypatch, Door(), address)


def test_a_streamlit_without_the_seam_is_refused_loudly(monkeypatch):
    import importlib

    monkeypatch.delattr(importlib.import_module(door.SEAM_MODULE), door.SEAM)
    with pytest.raises(SearchFailed, match="create_starlette_app is missing; refusing to serve"):
        door.install(Door(), lambda: "127.0.0.1")


def test_a_server_started_without_the_seam_is_stopped_and_fails(monkeypatch):
    from streamlit.web.server.server import Server

    async def start(self: Any) -> None:  # a Streamlit that builds its app some other way
        pass

    monkeypatch.setattr(Server, "start", start)
    door.require_guarded(lambda: False)
    stopped = []

    class Started:
        def stop(self) -> None:
            stopped.append(True)

    with pytest.raises(SearchFailed, match="never served unguarded"):
        asyncio.run(Server.start(Started()))  # type: ignore[arg-type]
    assert stopped == [True]
    monkeypatch.setattr(Server, "start", start)
    door.require_guarded(lambda: True)
    asyncio.run(Server.start(Started()))  # type: ignore[arg-type]
    assert stopped == [True]
