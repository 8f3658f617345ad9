"""A target file: how to reach a foreign retriever and how to read its answer, checked once.

A target file (TOML) has four tables: ``[target]`` (the transport and where it
listens), ``[request]`` (where the query, the depth, the static fields and the
paging go), ``[headers]`` (each header's value named by an environment
variable, never written in the file, so the file can be shared and committed)
and ``[answer]`` (where the result list is and which fields are the id, the
score and the text). Every mistake is refused naming the file and the key, so
a user fixes their file from the message alone.
"""

from __future__ import annotations

import re
import string
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchtrace.errors import ConfigError
from searchtrace.typedreads import FLAG, INTEGER, NUMBER, OBJECT, STRING, STRINGS, Kind, read

__all__ = ["ANSWER_SOURCES", "TRANSPORTS", "Answer", "Header", "Request", "Target", "TargetFile", "load_target_file",
           "parse_target_file"]

TRANSPORTS = ("http", "mcp-stdio", "mcp-http")
"""How a target is reached: plain HTTP, an MCP server run as a child over stdio, MCP over streamable HTTP."""
ANSWER_SOURCES = ("json", "structured", "text", "lines")
"""Where the answer is: the HTTP body's JSON, an MCP result's ``structuredContent``, its first JSON text block, or
its text blocks' lines (a result per line ``[answer] line`` matches, its named groups the result's fields)."""
_TABLES = ("target", "request", "headers", "answer")


@dataclass(frozen=True, slots=True)
class Target:
    """Where the service is: ``url`` (+ ``path``) for HTTP and MCP over HTTP, ``command`` for stdio."""

    transport: str
    url: str = ""
    path: str = ""
    command: tuple[str, ...] = ()
    method: str = "POST"
    tool: str = ""
    timeout_s: float = 30.0


@dataclass(frozen=True, slots=True)
class Request:
    """Where each part of our request goes in the service's: field names (dotted for nesting)."""

    query: str
    depth: str = ""
    max_depth: int | None = None
    offset: str = ""
    static: Mapping[str, Any] = field(default_factory=dict)
    forward: bool = False
    """Our whole request (``query``, ``top_k``, ``candidates``, ``mode``) as the base of the service's: a tool
    speaking our own contract (``searchtrace serve``'s ``search``)."""


@dataclass(frozen=True, slots=True)
class Header:
    """A header whose value is read from ``env`` at each run (``prefix`` before it: ``"Bearer "``)."""

    name: str
    env: str
    prefix: str = ""


@dataclass(frozen=True, slots=True)
class Answer:
    """Where the results are and what each one's id, score and text are (paths dotted; id a field or a template)."""

    source: str
    results: str
    id: str
    score: str = ""
    text: str = ""
    exclude: Mapping[str, Any] = field(default_factory=dict)
    """Results whose fields have these values are left out (HAWKI's relation hits: facts, not documents)."""
    line: str = ""
    """``lines`` only: the regular expression a result's line matches; its named groups are the fields."""
    error: str = ""
    """``lines`` only: a line matching this expression makes the answer the query's failure (a tool that answers
    its errors as text, not as an MCP error)."""


@dataclass(frozen=True, slots=True)
class TargetFile:
    """A whole target file, checked; ``origin`` names it in every error."""

    origin: str
    target: Target
    request: Request
    answer: Answer
    headers: tuple[Header, ...] = ()
    description: str = ""


class _Reader:
    """Reads one table's keys, each refusal naming ``origin`` and ``[table] key``."""

    def __init__(self, origin: str, table: str, data: Mapping[str, Any]) -> None:
        self.origin, self.table, self.data = origin, table, data

    def where(self, key: str) -> str:
        return f"{self.origin}: [{self.table}] {key}"

    def refuse(self, where: str, expected: str, got: object) -> ConfigError:
        return ConfigError(f"{where}: expected {expected}, got {got!r}", field=where.split(": ", 1)[-1])

    def get(self, key: str, kind: Kind[Any], default: Any = None, *, required: bool = False) -> Any:
        if key not in self.data:
            if required:
                raise ConfigError(f"{self.where(key)}: missing", field=f"[{self.table}] {key}")
            return default
        return read(self.data[key], kind, self.where(key), self.refuse)

    def choice(self, key: str, allowed: tuple[str, ...], default: str | None = None) -> str:
        value = self.get(key, STRING, default, required=default is None)
        if value not in allowed:
            raise ConfigError(f"{self.where(key)}: expected one of {', '.join(allowed)}, got {value!r}",
                              field=f"[{self.table}] {key}")
        return str(value)

    def unknown(self, known: tuple[str, ...]) -> None:
        """Refuse a key the table does not have: a typo would otherwise be silently ignored."""
        extra = sorted(set(self.data) - set(known))
        if extra:
            raise ConfigError(f"{self.where(extra[0])}: unknown key; allowed: {', '.join(known)}",
                              field=f"[{self.table}] {extra[0]}")


def _table(origin: str, data: Mapping[str, Any], name: str) -> _Reader:
    value = data.get(name, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{origin}: [{name}] must be a table", field=f"[{name}]")
    return _Reader(origin, name, value)


_POSITIVE = INTEGER.such_that(lambda v: v >= 1, "an integer >= 1")
_SECONDS = NUMBER.such_that(lambda v: v > 0, "a number of seconds > 0")


def _target(r: _Reader) -> Target:
    r.unknown(("transport", "url", "path", "command", "method", "tool", "timeout_s"))
    transport = r.choice("transport", TRANSPORTS)
    command = r.get("command", STRINGS, ())  # a profile leaves it out: given on the command line
    target = Target(transport, r.get("url", STRING, ""), r.get("path", STRING, ""), tuple(command),
                    r.choice("method", ("GET", "POST"), "POST"), r.get("tool", STRING, ""),
                    float(r.get("timeout_s", _SECONDS, 30.0)))
    if transport != "http" and not target.tool:
        raise ConfigError(f"{r.where('tool')}: missing (an MCP target names the tool to call)",
                          field="[target] tool")
    return target


def _request(r: _Reader) -> Request:
    r.unknown(("query", "depth", "max_depth", "offset", "static", "forward"))
    return Request(r.get("query", STRING, required=True), r.get("depth", STRING, ""),
                   r.get("max_depth", _POSITIVE), r.get("offset", STRING, ""), dict(r.get("static", OBJECT, {})),
                   bool(r.get("forward", FLAG, False)))


def _headers(r: _Reader) -> tuple[Header, ...]:
    out = []
    for name, value in r.data.items():
        if not isinstance(value, Mapping) or not isinstance(value.get("env"), str) or not value["env"]:
            raise ConfigError(f"{r.where(name)}: expected {{ env = \"VARIABLE\" }} (a header's value is read from "
                              "an environment variable, never written in the file)", field=f"[headers] {name}")
        h = _Reader(r.origin, f"headers.{name}", value)
        h.unknown(("env", "prefix"))
        out.append(Header(name, value["env"], h.get("prefix", STRING, "")))
    return tuple(out)


def _pattern(r: _Reader, key: str) -> re.Pattern[str] | None:
    text = r.get(key, STRING, "")
    if not text:
        return None
    try:
        return re.compile(text)
    except re.error as exc:
        raise ConfigError(f"{r.where(key)}: not a regular expression: {exc}", field=f"[answer] {key}") from None


def _lines(r: _Reader, answer: Answer) -> None:
    """A ``lines`` answer's ``line`` compiles and names every field ``id``, ``score`` and ``text`` read."""
    pattern, _ = _pattern(r, "line"), _pattern(r, "error")
    if answer.source != "lines":
        extra = [k for k in ("line", "error") if k in r.data]
        if extra:
            raise ConfigError(f"{r.where(extra[0])}: only for source = \"lines\"", field=f"[answer] {extra[0]}")
        return
    if pattern is None:
        raise ConfigError(f"{r.where('line')}: missing (source = \"lines\" reads a result from each line it "
                          "matches)", field="[answer] line")
    groups = set(pattern.groupindex)
    used = {"id": [n for _, n, _, _ in string.Formatter().parse(answer.id) if n] if "{" in answer.id else [answer.id],
            "score": [answer.score] if answer.score else [], "text": [answer.text] if answer.text else []}
    for key, names in used.items():
        missing = [n for n in names if n not in groups]
        if missing:
            raise ConfigError(f"{r.where(key)}: {missing[0]!r} is not a named group of [answer] line (groups: "
                              f"{', '.join(sorted(groups)) or 'none'})", field=f"[answer] {key}")


def _answer(r: _Reader, transport: str) -> Answer:
    r.unknown(("source", "results", "id", "score", "text", "exclude", "line", "error"))
    source = r.choice("source", ANSWER_SOURCES, "json" if transport == "http" else "structured")
    if (source == "json") != (transport == "http"):
        raise ConfigError(f"{r.where('source')}: {source!r} does not fit transport {transport!r} (json is HTTP's; "
                          "structured, text and lines are MCP's)", field="[answer] source")
    answer = Answer(source, r.get("results", STRING, ""), r.get("id", STRING, required=True),
                    r.get("score", STRING, ""), r.get("text", STRING, ""), dict(r.get("exclude", OBJECT, {})),
                    r.get("line", STRING, ""), r.get("error", STRING, ""))
    _lines(r, answer)
    return answer


def parse_target_file(text: str, origin: str) -> TargetFile:
    """A target file from its TOML text. Raises ConfigError naming ``origin`` and the key at fault."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{origin}: not valid TOML: {exc}", field="target-file") from None
    extra = sorted(set(data) - {*_TABLES, "description"})
    if extra:
        raise ConfigError(f"{origin}: unknown table or key {extra[0]!r}; allowed: {', '.join(_TABLES)}",
                          field=extra[0])
    target = _target(_table(origin, data, "target"))
    description = data.get("description", "")
    return TargetFile(origin, target, _request(_table(origin, data, "request")),
                      _answer(_table(origin, data, "answer"), target.transport),
                      _headers(_table(origin, data, "headers")), description if isinstance(description, str) else "")


def load_target_file(path: str | Path) -> TargetFile:
    """The target file at ``path``. Raises ConfigError naming the file (missing, unreadable, or a bad key)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"--target-file {path}: {reason}", field="target-file") from None
    return parse_target_file(text, str(path))

