"""Concept-RAG's seed text (``../shared/seeds/004_*``) read as data: each tool's parameters and the shape of its
answer (the JSON example, or the field table where the text gives no JSON), and the error schema and codes."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SEED = Path(__file__).resolve().parents[1].parent / "shared" / "seeds" / "004_b75daf9642034bfa.txt"
TOOLS = ("catalog_search", "broad_chunks_search", "chunks_search", "concept_search", "extract_concepts",
         "source_concepts", "concept_sources", "category_search", "list_categories", "list_concepts_in_category")
HEADING = "\u00b6"
_TYPES = {"string": "string", "string[]": ["string"], "number": 0, "number[]": [0], "boolean": False}


@dataclass(frozen=True)
class SeedTool:
    name: str
    parameters: dict[str, bool]  # name -> required
    answer: Any  # the example JSON (strings "string", numbers 0, ...)


def _json_at(lines: list[str], start: int) -> Any:
    depth, out = 0, []
    for line in lines[start:]:
        out.append(line)
        depth += line.count("{") + line.count("[") - line.count("}") - line.count("]")
        if depth == 0:
            return json.loads("\n".join(out))
    raise ValueError(f"{SEED}: unclosed JSON from line {start + 1}")


def _table(lines: list[str], start: int) -> list[tuple[str, str]]:
    """(name, the next line) of each row of the table starting at ``start`` (its header, then a rule)."""
    rows, i = [], start + 2
    while i + 1 < len(lines) and lines[i].endswith("|"):  # a row is two lines or three (a wrapped description)
        if re.fullmatch(r"[\w.\[\]]+ \|", lines[i]) and lines[i + 1].split(" | ")[0].strip() in _TYPES:
            rows.append((lines[i][:-2], lines[i + 1]))
        i += 1
    return rows


def _answer(lines: list[str], i: int) -> Any:
    if lines[i].startswith(("{", "[")):
        return _json_at(lines, i)
    row = {name: _TYPES[kind.split(" | ")[0].strip()] for name, kind in _table(lines, i)}
    return [row]  # a search tool answers a JSON array of these


def tools() -> dict[str, SeedTool]:
    lines = SEED.read_text(encoding="utf-8").splitlines()
    starts = {line[:-1]: i for i, line in enumerate(lines) if line.endswith(HEADING) and line[:-1] in TOOLS}
    ends = sorted([*starts.values(), next(i for i, line in enumerate(lines) if line == f"Error Schema{HEADING}")])
    out = {}
    for name, start in starts.items():
        end = next(e for e in ends if e > start)
        section = lines[start:end]
        inputs = section.index(f"Input Schema{HEADING}")
        params = {n: "\u2705" in kind for n, kind in _table(section, inputs + 1)}
        output = next(i for i, line in enumerate(section) if line.startswith("Output Schema"))
        out[name] = SeedTool(name, params, _answer(section, output + 1))
    return out


def error_schema() -> tuple[dict[str, Any], list[str]]:
    """The error object's example and the codes the table lists."""
    lines = SEED.read_text(encoding="utf-8").splitlines()
    at = lines.index(f"Error Schema{HEADING}")
    example = _json_at(lines, next(i for i in range(at, len(lines)) if lines[i].startswith("{")))
    codes = [line[:-2] for line in lines[at:] if re.fullmatch(r"[A-Z_]+ \|", line)]
    return example, codes


def same_shape(example: Any, got: Any, where: str = "answer") -> list[str]:
    """Where ``got`` differs from the example's keys and types (``"string|null"`` allows null; an empty list
    in the answer has no items to check)."""
    if isinstance(example, dict):
        if not isinstance(got, dict):
            return [f"{where}: expected an object, got {type(got).__name__}"]
        if not example:
            return []  # an open object (the error's context)
        wrong = [f"{where}: keys {sorted(set(got) ^ set(example))} differ"] if set(got) != set(example) else []
        return wrong + [w for k in example if k in got for w in same_shape(example[k], got[k], f"{where}.{k}")]
    if isinstance(example, list):
        if not isinstance(got, list):
            return [f"{where}: expected a list, got {type(got).__name__}"]
        return [w for i, item in enumerate(got) for w in same_shape(example[0], item, f"{where}[{i}]")] if example else []
    if isinstance(example, bool):
        return [] if isinstance(got, bool) else [f"{where}: expected a boolean, got {got!r:.40}"]
    if isinstance(example, int):
        return [] if isinstance(got, int) and not isinstance(got, bool) else [f"{where}: expected an integer, got {got!r:.40}"]
    if isinstance(example, float):
        return [] if isinstance(got, (int, float)) and not isinstance(got, bool) else [f"{where}: expected a number"]
    if isinstance(example, str):
        if got is None and "null" in example:
            return []
        return [] if isinstance(got, str) else [f"{where}: expected a string, got {got!r:.40}"]
    return [f"{where}: unexpected example {example!r}"]
