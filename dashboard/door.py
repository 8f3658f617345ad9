"""The dashboard's door: Streamlit's server, started in this process behind ``serve``'s guards.

``searchtrace dashboard`` runs ``python -m searchtrace.dashboard.door
[--allowed-hosts H,...] -- run app.py ...``. Before Streamlit starts, the ASGI
app it builds (``create_starlette_app``, looked up in
:data:`SEAM_MODULE` when its server starts) is wrapped in
:class:`searchtrace.guards.HostCheck` and, with ``$SEARCHTRACE_API_KEY`` set,
:class:`searchtrace.guards.BearerAuth`: every HTTP request and websocket
upgrade is checked. A Streamlit without that seam, or whose server starts
without calling it, is refused: the dashboard never serves unguarded.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from searchtrace import environment as env_names
from searchtrace.envvalues import text
from searchtrace.errors import ConfigError, SearchFailed, SearchtraceError
from searchtrace.guards import ASGIApp, BearerAuth, HostCheck, exposure_problem, own_names

__all__ = ["OPEN_PATHS", "SEAM", "SEAM_MODULE", "Door", "door_arguments", "install", "main", "require_guarded"]

SEAM_MODULE = "streamlit.web.server.starlette.starlette_server"
"""The module whose ``create_starlette_app`` Streamlit's server calls to build its ASGI app (1.67 does)."""

SEAM = "create_starlette_app"

OPEN_PATHS = frozenset({"/_stcore/health"})
"""Answered whatever the Host and without the key: a probe's ``ok``, nothing of the home."""


@dataclass(frozen=True)
class Door:
    """Who the dashboard lets in.

    Attributes:
        allowed_hosts: Host names answered beside the loopback names and the bound address
            (``--allowed-hosts``, as ``serve`` takes them).
        api_key: the key every request must carry as ``Authorization: Bearer`` (None: none asked,
            allowed on a loopback address only).
    """

    allowed_hosts: str | None = None
    api_key: str | None = None

    def guard(self, app: ASGIApp, address: str | None) -> ASGIApp:
        """``app`` behind the key (when set) and the Host check; refuses an exposed address without a key."""
        if problem := exposure_problem(address, self.api_key):
            raise ConfigError(problem, field=env_names.SEARCHTRACE_API_KEY)
        if self.api_key:
            app = BearerAuth(app, self.api_key, open_paths=OPEN_PATHS)
        return HostCheck(app, own_names(address, self.allowed_hosts), open_paths=OPEN_PATHS, origins_flag=None)


def door_arguments(allowed_hosts: str | None) -> list[str]:
    """The door's own arguments on its command line (the key travels in the environment, never here)."""
    return ["--allowed-hosts", allowed_hosts] if allowed_hosts else []


def install(door: Door, address: Callable[[], str | None]) -> Callable[[], bool]:
    """Wrap the app Streamlit's server builds in ``door``; returns whether the wrapper has run since.

    Args:
        door: who is let in.
        address: the address the server binds, read when the app is built (Streamlit's config by then).

    Raises:
        SearchFailed: this Streamlit builds its app elsewhere (no seam to hook).
    """
    import importlib

    try:
        module: Any = importlib.import_module(SEAM_MODULE)
        build = getattr(module, SEAM)
    except (ImportError, AttributeError):
        raise SearchFailed(f"cannot guard this Streamlit ({_version()}): {SEAM_MODULE}.{SEAM} is missing; "
                           "refusing to serve the dashboard unguarded") from None
    built: list[ASGIApp] = []

    def guarded(*args: Any, **kwargs: Any) -> ASGIApp:
        app = door.guard(build(*args, **kwargs), address())
        built.append(app)
        return app

    module.create_starlette_app = guarded
    return lambda: bool(built)


def _version() -> str:
    import streamlit

    return f"streamlit {getattr(streamlit, '__version__', '?')}"


def require_guarded(used: Callable[[], bool]) -> None:
    """Make Streamlit's server stop and fail at start when it served an app the door did not build."""
    from streamlit.web.server.server import Server

    start = Server.start

    async def checked_start(self: Any) -> None:
        await start(self)
        if not used():
            self.stop()
            raise SearchFailed(f"{_version()} started a server without {SEAM_MODULE}.{SEAM}: stopped, "
                               "never served unguarded")

    Server.start = checked_start  # type: ignore[method-assign]


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> None:
    """``python -m searchtrace.dashboard.door [--allowed-hosts H,...] -- STREAMLIT ARGUMENTS``."""
    args = list(sys.argv[1:] if argv is None else argv)
    split = args.index("--") if "--" in args else len(args)
    parser = argparse.ArgumentParser(prog="searchtrace.dashboard.door", allow_abbrev=False)
    parser.add_argument("--allowed-hosts")
    own = parser.parse_args(args[:split])
    env = os.environ if environ is None else environ
    door = Door(allowed_hosts=own.allowed_hosts, api_key=text(env, env_names.SEARCHTRACE_API_KEY))
    try:
        from streamlit import config
        from streamlit.web.cli import main as streamlit_main

        used = install(door, lambda: config.get_option("server.address"))
        require_guarded(used)
        sys.argv = ["streamlit", *args[split + 1:]]
        streamlit_main(args=args[split + 1:], prog_name="streamlit")
    except SearchtraceError as exc:  # one line, as the CLI's: the door did not open
        raise SystemExit(f"error: {exc.message}") from None


if __name__ == "__main__":  # pragma: no cover
    main()
