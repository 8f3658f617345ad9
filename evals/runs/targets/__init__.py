"""Targets in any shape: a foreign retriever (HTTP of any shape, an MCP tool) as an eval's search function.

``config`` reads a target file, ``profiles`` holds the five built-in ones,
``mapping`` reads an answer into our response, ``wire`` is what every transport
shares (headers, ``traceparent``, errors by kind), ``shaped`` builds the request
and pages, ``http`` and ``mcp`` (with ``session``, its loop thread) fetch a page,
``opening`` turns the command line's target into a search function and ``cli``
is ``searchtrace targets``.
"""

from typing import TYPE_CHECKING

from searchtrace._lazy import exports

if TYPE_CHECKING:
    from searchtrace.evals.runs.targets.config import TargetFile, load_target_file, parse_target_file
    from searchtrace.evals.runs.targets.opening import is_shaped, open_shaped, target_spec
    from searchtrace.evals.runs.targets.profiles import load_profile, profile_names, profile_text

__getattr__, __dir__, __all__ = exports(__name__, __file__)
