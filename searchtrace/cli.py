"""The ``searchtrace`` command line: the roof over every package's commands.

It only assembles: each package registers its subcommands on the parser
(``register``), and every command module imports its heavy dependencies inside
the handler that needs them, so ``searchtrace --help`` stays fast. Nothing
imports this module back.

Exit codes (:class:`searchtrace.errors.ExitCode`): 0 success, 1 failure (a
failed search or eval, a regression, an unexpected error), 2 invalid input
(a path that cannot be used as given included), 130 interrupted, 141 standard output's reader gone. No error
prints a traceback unless ``searchtrace --debug`` asks for it.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from searchtrace import __version__
from searchtrace import environment as env_names
from searchtrace.dashboard.cli import register as register_dashboard
from searchtrace.database.cli import register as register_store
from searchtrace.errors import ExitCode, SearchtraceError, os_error_message
from searchtrace.evals.cli import register as register_evals
from searchtrace.retriever.cli import register as register_retriever
from searchtrace.traces.cli import register as register_traces

if TYPE_CHECKING:
    from searchtrace.database import Migration

__all__ = ["build_parser", "main", "migrations"]

Handler = Callable[[argparse.Namespace], int]


class _Parser(argparse.ArgumentParser):
    """An argument parser that takes options only as spelt: a prefix (``--run`` for ``--runs``) is an
    error, so a typo never passes for another option, and adding an option never changes what an old
    command line means. Every subcommand's parser is one too (``add_subparsers`` makes its own class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    """The parser with every package's subcommands."""
    parser = _Parser(
        prog="searchtrace",
        description="Evaluation and tracing harness around a hybrid, graph-aware retriever.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    parser.add_argument("--debug", dest="traceback", action="store_true",
                        help="print the full traceback of an unexpected error (default: one line)")
    parser.add_argument("--version", action="version", version=f"searchtrace {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in (register_retriever, register_evals, register_traces, register_dashboard):
        register(sub)
    register_store(sub, migrations)
    return parser


def migrations() -> tuple[Migration, ...]:
    """The shared store's schema, every step from the store that declares it (what ``store migrate`` applies)."""
    from searchtrace.evals import JUDGMENTS_MIGRATION, RUNS_MIGRATION
    from searchtrace.traces import FOREIGN_MIGRATION, TRACES_MIGRATION

    return (TRACES_MIGRATION, RUNS_MIGRATION, JUDGMENTS_MIGRATION, FOREIGN_MIGRATION)


_PATH_ERRNOS = (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOTDIR, errno.EEXIST, errno.EISDIR, errno.ENOENT,
                errno.ENAMETOOLONG)


def os_error_exit(exc: OSError) -> ExitCode:
    """``INVALID`` for a path that cannot be used as given (read-only, a file for a folder), else ``FAILURE``."""
    return ExitCode.INVALID if exc.errno in _PATH_ERRNOS else ExitCode.FAILURE


def _home_problem(args: argparse.Namespace) -> str | None:
    """A home (``--home`` or ``$SEARCHTRACE_HOME``) that is a file: named before any work starts."""
    if not hasattr(args, "home"):
        return None
    from searchtrace.home import Home

    problem = Home.resolve(args.home).problem()
    if problem is None:
        return None
    source = "--home" if args.home else f"${env_names.SEARCHTRACE_HOME}"
    return f"{problem} (from {source}): point {source} at a folder"


def _command(args: argparse.Namespace) -> str:
    """The command run, with its subcommand: ``judge import``."""
    sub = getattr(args, f"{args.command}_command", None)
    return f"{args.command} {sub}" if isinstance(sub, str) else str(args.command)


def _traceback(exc: BaseException, args: argparse.Namespace) -> None:
    """The traceback on stderr, with ``searchtrace --debug`` only."""
    if args.traceback:
        import traceback

        traceback.print_exception(exc)


def _unexpected(exc: BaseException, args: argparse.Namespace) -> int:
    """The last resort: one line naming the command and the error; the traceback only with ``--debug``."""
    _traceback(exc, args)
    where = f"searchtrace {args.command}" if getattr(args, "command", None) else "searchtrace"
    message = str(exc).splitlines()[0] if str(exc) else ""
    print(f"error: {where} failed: {type(exc).__name__}{': ' + message if message else ''}"
          + ("" if args.traceback else " (run `searchtrace --debug ...` for the traceback, and report it)"),
          file=sys.stderr)
    return int(ExitCode.FAILURE)


def _pipe_closed() -> int:
    """Standard output's reader is gone: what is left unwritten goes to devnull (as Python's docs advise on
    SIGPIPE), so the flush at exit raises nothing; exit ``PIPE_CLOSED``."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout replaced by something without a descriptor (a test's capture)
        pass
    return int(ExitCode.PIPE_CLOSED)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns its exit code."""
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # as typed: a command that resumes repeats it
    import logging  # after parsing: --help and argument errors need not load it

    from searchtrace import notices

    notices.configure(logging.INFO if args.verbose else logging.WARNING)
    notices.report_fatal_signals()
    os.environ.setdefault(env_names.TOKENIZERS_PARALLELISM, "false")
    handler: Handler = args.func
    problem = _home_problem(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return int(ExitCode.INVALID)
    try:
        code = int(handler(args))
        sys.stdout.flush()  # a reader gone shows here, not as Python's own message at exit
        return code
    except SearchtraceError as exc:
        _traceback(exc, args)
        print(f"error: {exc.message}", file=sys.stderr)
        return int(exc.exit_code)
    except BrokenPipeError:  # a pager or `head` closed the pipe: stop quietly
        return _pipe_closed()
    except OSError as exc:  # a full disk, a read-only or missing folder: one line, never a traceback
        _traceback(exc, args)
        print(f"error: {os_error_message(exc, _command(args))}", file=sys.stderr)
        return int(os_error_exit(exc))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except Exception as exc:  # noqa: BLE001 - the last resort: never a traceback unless asked
        return _unexpected(exc, args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
