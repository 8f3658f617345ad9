"""The ``searchtrace`` command line: the roof over every package's commands.

It only assembles: each package registers its subcommands on the parser
(``register``), and every command module imports its heavy dependencies inside
the handler that needs them, so ``searchtrace --help`` stays fast. Nothing
imports this module back.

Exit codes (:class:`searchtrace.errors.ExitCode`): 0 success, 1 failure (a
failed search or eval, a regression), 2 invalid input, 130 interrupted.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Callable, Sequence

from searchtrace import __version__
from searchtrace import environment as env_names
from searchtrace.dashboard.cli import register as register_dashboard
from searchtrace.errors import ExitCode, SearchtraceError
from searchtrace.evals.cli import register as register_evals
from searchtrace.retriever.cli import register as register_retriever
from searchtrace.traces.cli import register as register_traces

__all__ = ["build_parser", "main"]

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    """The parser with every package's subcommands."""
    parser = argparse.ArgumentParser(
        prog="searchtrace",
        description="Evaluation and tracing harness around a hybrid, graph-aware retriever.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    parser.add_argument("--version", action="version", version=f"searchtrace {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in (register_retriever, register_evals, register_traces, register_dashboard):
        register(sub)
    return parser


def os_error_message(exc: OSError) -> str:
    """One line for an operating-system error: what failed, on which file, and what to do."""
    where = f" ({exc.filename})" if exc.filename else ""
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return (f"{reason}{where}: free some space and run the same command again "
                "(an interrupted eval resumes where it stopped)")
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return f"{reason}{where}: choose a writable place (--home, --out) or fix its permissions"
    return f"{reason}{where}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns its exit code."""
    args = build_parser().parse_args(argv)
    import logging  # after parsing: --help and argument errors need not load it

    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(message)s")
    os.environ.setdefault(env_names.TOKENIZERS_PARALLELISM, "false")
    handler: Handler = args.func
    try:
        return int(handler(args))
    except SearchtraceError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return int(exc.exit_code)
    except BrokenPipeError:  # a pager or `head` closed the pipe: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return int(ExitCode.OK)
    except OSError as exc:  # a full disk, a read-only or missing folder: one line, never a traceback
        print(f"error: {os_error_message(exc)}", file=sys.stderr)
        return int(ExitCode.FAILURE)
    except KeyboardInterrupt:
        return int(ExitCode.INTERRUPTED)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
