"""A target as the command line names it, opened into a search function.

``--target`` takes a URL (our contract), ``module:function``, ``mcp+stdio:COMMAND
ARGS...`` or ``mcp+http(s)://HOST/PATH`` (with ``--tool``); ``--target-file`` a
target file; ``--target-profile NAME ENDPOINT`` a built-in profile with its URL
or command. They travel as one string, the run's ``target:`` label and its
resume key, so :func:`target_spec` writes them and :func:`open_shaped` reads
them back (never with a header's value: those are read from the environment).
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from urllib.parse import urlsplit

from searchtrace.errors import BackendUnavailable, ValidationError
from searchtrace.evals.runs.targets.config import TargetFile, load_target_file
from searchtrace.evals.runs.targets.profiles import load_profile
from searchtrace.evals.runs.targets.shaped import ShapedSearch
from searchtrace.evals.runs.targets.wire import header_values

__all__ = ["FILE_PREFIX", "MCP_PREFIXES", "PROFILE_PREFIX", "is_shaped", "open_shaped", "target_spec"]

MCP_PREFIXES = ("mcp+stdio:", "mcp+http://", "mcp+https://")
FILE_PREFIX = "target-file:"
PROFILE_PREFIX = "target-profile:"
_TOOL = " --tool "


def target_spec(target: str | None, tool: str | None, file: str | None, profile: list[str] | None) -> str | None:
    """The one string naming the target the flags chose (None: none chose one). Raises ValidationError on a mix."""
    chosen = [name for name, value in (("--target", target), ("--target-file", file), ("--target-profile", profile))
              if value]
    if len(chosen) > 1:
        raise ValidationError(f"give one of --target, --target-file, --target-profile, not {' and '.join(chosen)}",
                              field="target")
    if tool and not (target or "").startswith(MCP_PREFIXES):
        raise ValidationError("--tool goes with --target mcp+stdio:COMMAND or mcp+http(s)://...", field="tool")
    if target and target.startswith(MCP_PREFIXES):
        if not tool:
            raise ValidationError(f"--target {target}: an MCP target needs --tool NAME", field="tool")
        return f"{target}{_TOOL}{tool}"
    if file:
        return f"{FILE_PREFIX}{file}"
    if profile:
        if len(profile) != 2:
            raise ValidationError("--target-profile takes a NAME and its URL or command "
                                  "(searchtrace targets list names them)", field="target-profile")
        return f"{PROFILE_PREFIX}{profile[0]} {profile[1]}"
    return target


def is_shaped(spec: str) -> bool:
    """Whether ``spec`` names a target this package opens (not our contract's URL nor a function)."""
    return spec.startswith((*MCP_PREFIXES, FILE_PREFIX, PROFILE_PREFIX))


def _adhoc(spec: str) -> tuple[TargetFile, str]:
    """``mcp+...`` with ``--tool``: a tool speaking our contract, called with our request (``top_k`` the depth),
    its structured ``results`` read as ours (relation hits, facts, left out as ``eval --target URL`` does)."""
    from searchtrace.evals.runs.targets.config import parse_target_file

    where, _, tool = spec.rpartition(_TOOL)
    stdio = where.startswith("mcp+stdio:")
    transport = "mcp-stdio" if stdio else "mcp-http"
    endpoint = where[len("mcp+stdio:"):] if stdio else where[len("mcp+"):]
    text = (f'[target]\ntransport = "{transport}"\ntool = {json.dumps(tool)}\n'
            '[request]\nquery = "query"\ndepth = "top_k"\nforward = true\n'
            '[answer]\nresults = "results"\nid = "id"\nscore = "score"\ntext = "content"\n'
            'exclude = { component_type = "relation" }\n')
    return parse_target_file(text, f"--target {where}"), endpoint


def _endpoint(spec: TargetFile, given: str) -> str | list[str]:
    """The URL (the file's or the command line's, joined with the file's path) or the stdio command's words."""
    if spec.target.transport == "mcp-stdio":
        words = shlex.split(given) if given else list(spec.target.command)
        if not words:
            raise ValidationError(f"{spec.origin}: no command to run (give it after the profile's name, or as "
                                  "[target] command)", field="command")
        return words
    url = given or spec.target.url
    if not url:
        raise ValidationError(f"{spec.origin}: no URL (give it after the profile's name, or as [target] url)",
                              field="url")
    if not url.startswith(("http://", "https://")):
        raise ValidationError(f"{spec.origin}: expected an http(s):// URL for the service, got {url!r}", field="url")
    if spec.target.path and urlsplit(url).path in ("", "/"):
        url = url.rstrip("/") + spec.target.path
    return url


def check_reachable(endpoint: str | list[str], origin: str) -> None:
    """Fail before the run when nothing listens at the URL or the command does not exist, rather than scoring
    every query as an error (a TCP connection only: nothing is asked of the service).

    Raises:
        BackendUnavailable: no connection to the URL's host and port.
        ValidationError: the stdio command is not found.
    """
    import shutil
    import socket

    if isinstance(endpoint, list):
        if shutil.which(endpoint[0]) is None:
            raise ValidationError(f"{origin}: command {endpoint[0]!r} not found", field="command")
        return
    parts = urlsplit(endpoint)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname or "", port), timeout=10).close()
    except OSError as exc:
        raise BackendUnavailable(f"{origin}: nothing answers ({exc.strerror or exc}); start the service or fix "
                                 "the URL") from None


def open_shaped(spec: str, timeout_s: float | None = None) -> ShapedSearch:
    """The search function ``spec`` names (see :func:`target_spec`), its service checked to be there;
    ``timeout_s`` (``--target-timeout``) in place of the file's own when given.

    Raises:
        ValidationError, ConfigError: a spec, file or profile that cannot be used.
        BackendUnavailable: nothing listens at its URL.
    """
    given = ""
    if spec.startswith(MCP_PREFIXES):
        file, given = _adhoc(spec)
    elif spec.startswith(FILE_PREFIX):
        file = load_target_file(spec[len(FILE_PREFIX):])
    else:
        name, _, given = spec[len(PROFILE_PREFIX):].partition(" ")
        file = load_profile(name)
    if timeout_s is not None:
        file = dataclasses.replace(file, target=dataclasses.replace(file.target, timeout_s=timeout_s))
    endpoint = _endpoint(file, given)
    origin = f"{file.origin if not spec.startswith(MCP_PREFIXES) else 'MCP'} at " \
             f"{endpoint if isinstance(endpoint, str) else shlex.join(endpoint)}"
    header_values(file.headers, file.origin)  # an unset variable is named before anything is reached
    check_reachable(endpoint, origin)
    if file.target.transport == "http":
        from searchtrace.evals.runs.targets.http import HttpShaped

        assert isinstance(endpoint, str)
        return HttpShaped(file, endpoint, origin)
    from searchtrace.evals.runs.targets.mcp import McpShaped

    return McpShaped(file, endpoint, origin)
