"""``searchtrace targets list`` and ``targets show NAME``, and the target flags ``eval`` takes."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from searchtrace.errors import ExitCode

__all__ = ["add_target_arguments", "register", "spec_from_arguments"]


def add_target_arguments(p: argparse.ArgumentParser) -> None:
    """``--target``, ``--tool``, ``--target-file`` and ``--target-profile`` on ``eval``."""
    p.add_argument("--target", metavar="SPEC",
                   help="search this instead of the local retriever: a URL (POST URL/v1/search), module:function, "
                        "mcp+stdio:COMMAND or mcp+http(s)://HOST/PATH (with --tool)")
    p.add_argument("--tool", help="the MCP tool an mcp+ --target calls (with query and top_k)")
    p.add_argument("--target-file", metavar="TOML", help="search the service a target file describes "
                   "(README: Evaluate your own retriever)")
    p.add_argument("--target-profile", nargs="+", metavar=("NAME", "URL_OR_COMMAND"),
                   help="a built-in target file and its service's URL or command (searchtrace targets list)")


def spec_from_arguments(args: argparse.Namespace) -> str | None:
    """The one target string the flags name (None: the local retriever)."""
    from searchtrace.evals.runs.targets.opening import target_spec

    return target_spec(args.target, args.tool, args.target_file, args.target_profile)


def cmd_list(args: argparse.Namespace) -> int:
    from searchtrace.evals.runs.targets.profiles import load_profile, profile_names
    from searchtrace.terminal import fit, width

    columns = width(stream=sys.stdout)
    for name in profile_names():
        print(fit(f"{name:<16} {load_profile(name).description}", columns))
    print(fit("targets show NAME prints one to copy; eval --target-profile NAME URL uses it", columns))
    return ExitCode.OK


def cmd_show(args: argparse.Namespace) -> int:
    from searchtrace.evals.runs.targets.profiles import profile_text

    sys.stdout.write(profile_text(args.name))
    return ExitCode.OK


def register(sub: Any) -> None:
    """Add ``targets list`` and ``targets show`` to ``sub`` (the main parser's subparsers)."""
    p = sub.add_parser("targets", help="the built-in target profiles: foreign retrievers eval --target-profile reads")
    inner = p.add_subparsers(dest="targets_command", required=True, metavar="COMMAND")
    listing = inner.add_parser("list", help="the built-in profiles and what each maps")
    listing.set_defaults(func=cmd_list)
    show = inner.add_parser("show", help="print a profile's target file (copy it to start your own)")
    show.add_argument("name", help="a profile's name (targets list)")
    show.set_defaults(func=cmd_show)
