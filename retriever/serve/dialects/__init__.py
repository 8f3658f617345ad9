"""Other systems' surfaces served beside our own (``searchtrace serve --dialect NAME``).

A dialect is one module with one entry function, ``tools(service) -> Dialect``: its tools, each a thin
translation of its request into our search request and of our response into its answer, and how its
answers and errors look on the wire. The registry maps a dialect's name to its module.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from searchtrace.errors import NotFoundError, SearchtraceError

if TYPE_CHECKING:
    import mcp_types as types

    from searchtrace.retriever.serve.service import Service

__all__ = ["DIALECTS", "Dialect", "load_dialect"]

DIALECTS: dict[str, str] = {"concept-rag": "searchtrace.retriever.serve.dialects.concept_rag"}
"""Each dialect's name (``--dialect NAME``) and its module."""

Handler = Callable[[dict[str, Any]], Awaitable[Any]]
"""One tool: its arguments in, its answer's payload out; raises a SearchtraceError."""


@dataclass(frozen=True)
class Dialect:
    """What a dialect registers on the MCP server.

    Attributes:
        name: the dialect's name (on each call's server span).
        tools: the tools listed, beside our own.
        handlers: each tool's handler by name.
        answer: a handler's payload as the tool's result.
        refuse: an error (and the tool's name) as the tool's error result, in the dialect's error schema.
    """

    name: str
    tools: tuple[types.Tool, ...]
    handlers: Mapping[str, Handler]
    answer: Callable[[Any], types.CallToolResult]
    refuse: Callable[[SearchtraceError, str], types.CallToolResult]


def load_dialect(name: str, service: Service) -> Dialect:
    """The dialect ``name``'s tools over ``service``. Raises NotFoundError listing the dialects."""
    if name not in DIALECTS:
        raise NotFoundError(f"unknown dialect {name!r}; dialects: {', '.join(DIALECTS)}", field="dialect")
    dialect: Dialect = importlib.import_module(DIALECTS[name]).tools(service)
    return dialect
