"""``searchtrace dashboard``: start the Streamlit app on the local trace store and run folders."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from searchtrace import environment as env_names
from searchtrace.database import add_store_argument, resolve_store_url
from searchtrace.envvalues import text
from searchtrace.errors import ConfigError, ExitCode
from searchtrace.guards import exposure_problem
from searchtrace.home import Home, add_home_argument

__all__ = ["DEFAULT_ADDRESS", "DEFAULT_PORT", "register", "streamlit_command"]

DEFAULT_ADDRESS = "127.0.0.1"
DEFAULT_PORT = 8501
APP = Path(__file__).resolve().parent / "app.py"


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``dashboard`` command to a CLI's subparsers."""
    p = subparsers.add_parser("dashboard", help="browse runs, traces and regressions in a local web app")
    add_home_argument(p)
    add_store_argument(p)
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port to serve on (default {DEFAULT_PORT})")
    p.add_argument("--address", default=DEFAULT_ADDRESS,
                   help=f"address to bind (default {DEFAULT_ADDRESS}: this machine only; any other needs "
                        f"{env_names.SEARCHTRACE_API_KEY})")
    p.add_argument("--allowed-hosts", metavar="HOST,...",
                   help="Host names the dashboard answers beside the loopback names and the bound address "
                        "(a reverse proxy's public name)")
    p.set_defaults(func=cmd_dashboard)
    return p


def _home(args: argparse.Namespace) -> Path:
    return Home.resolve(args.home).root.resolve()


def streamlit_command(home: Path, address: str, port: int, allowed_hosts: str | None = None) -> list[str]:
    """The command line serving the app for ``home``: ``streamlit run`` behind the door (``dashboard.door``)."""
    from searchtrace.dashboard.door import door_arguments

    return [sys.executable, "-m", "searchtrace.dashboard.door", *door_arguments(allowed_hosts), "--",
            "run", str(APP), "--server.address", address,
            "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false",
            "--client.toolbarMode", "minimal",
            "--", "--home", str(home)]


def cmd_dashboard(args: argparse.Namespace) -> int:
    if not 1 <= args.port <= 65535:
        print(f"error: --port must be between 1 and 65535, got {args.port}", file=sys.stderr)
        return ExitCode.INVALID
    if problem := exposure_problem(args.address, text(os.environ, env_names.SEARCHTRACE_API_KEY)):
        raise ConfigError(f"--address: {problem}", field="--address")
    try:
        import streamlit  # noqa: F401
    except ImportError:
        print("error: the dashboard needs streamlit: pip install streamlit altair", file=sys.stderr)
        return ExitCode.FAILURE
    home = _home(args)
    store = resolve_store_url(args.store)
    shared = f", store {store.masked()}" if store else ""
    print(f"searchtrace dashboard on http://{args.address}:{args.port} (home {home}{shared}); Ctrl+C stops it",
          file=sys.stderr)
    env = os.environ | {env_names.SEARCHTRACE_HOME: str(home)}
    if store is not None:  # in the environment, never on the command line (where ps would show its password)
        env[env_names.SEARCHTRACE_STORE] = store.conninfo
    command = streamlit_command(home, args.address, args.port, args.allowed_hosts)
    if os.name == "posix":  # become the server, so signals (a service manager's SIGTERM) reach it
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(command[0], command, env)
    try:
        import subprocess  # here: --help need not load it

        return subprocess.call(command, env=env)
    except KeyboardInterrupt:
        return 130
