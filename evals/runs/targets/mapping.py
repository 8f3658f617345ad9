"""A foreign answer read through a target file's ``[answer]`` table into our response's JSON.

The service's result list is found at a dotted path; each result's id is one
field or a template composing several (``{doc_id}#{chunk_id}``), its score a
number or a numeric string (missing: None), its text a field. Everything a
service answers that does not fit is refused as :class:`SearchFailed` naming
where in the answer (``results[3].doc_id``), so a wrong mapping is one clear
line per query, never a silent empty ranking.
"""

from __future__ import annotations

import json
import math
import re
import string
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from searchtrace.errors import SearchFailed
from searchtrace.evals.runs.targets.config import Answer

__all__ = ["Mapped", "line_answer", "map_results", "response_json", "results_of", "text_answer"]

_FIELD = re.compile(r"\{([^{}]+)\}")


class Mapped(NamedTuple):
    """One result, read: the id the qrels know, the score the service gave (None: it gave none), the text.

    A named tuple: built a hundred times a query, at a third of a frozen dataclass's cost (a sixth by
    ``tuple.__new__``)."""

    id: str
    score: float | None
    text: str


def _walk(data: Any, path: str, where: str) -> tuple[Any, str]:
    """The value at dotted ``path`` inside ``data``, and its place in the answer; refused naming the place."""
    here = where
    for part in [p for p in path.split(".") if p]:
        if not isinstance(data, Mapping) or part not in data:
            at = f"{here}.{part}" if here else part
            raise SearchFailed(f"the answer has no {at}", field=at)
        data, here = data[part], f"{here}.{part}" if here else part
    return data, here


def results_of(answer: Any, spec: Answer, origin: str) -> tuple[list[Any], str]:
    """The result list at ``spec.results`` in ``answer``, and where it is; refused if it is not a list."""
    try:
        found, where = _walk(answer, spec.results, "")
    except SearchFailed as exc:
        raise SearchFailed(f"{origin}: {exc.message} ([answer] results = {spec.results!r})", field=exc.field) from None
    if not isinstance(found, list):
        raise SearchFailed(f"{origin}: {where or 'the answer'} is {type(found).__name__}, not a list of results "
                           f"([answer] results = {spec.results!r})", field=where or "results")
    return found, where


def _scalar(item: Any, path: str, where: str) -> Any:
    value, at = _walk(item, path, where)
    if isinstance(value, (Mapping, list)) or value is None:
        raise SearchFailed(f"{at} is {type(value).__name__}, not a value", field=at)
    return value


def _id(item: Any, template: str, where: str) -> str:
    """One field (``id``) or a template of several (``{doc_id}#{chunk_id}``), as a non-empty string."""
    if "{" not in template:
        value = str(_scalar(item, template, where))
    else:
        fields = [name for _, name, _, _ in string.Formatter().parse(template) if name]
        values = {name: _scalar(item, name, where) for name in fields}
        value = _FIELD.sub(lambda m: str(values[m.group(1)]), template)
    if not value:
        raise SearchFailed(f"{where}: the id ({template}) is empty", field=where)
    return value


def _score(item: Any, path: str, where: str) -> float | None:
    """A number or a numeric string (Concept-RAG's ``"0.873"``); None where the service gives none."""
    if not path:
        return None
    value, at = _walk(item, path, where) if isinstance(item, Mapping) and _has(item, path) else (None, "")
    if value is None:
        return None
    try:
        score = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        score = math.nan
    if math.isnan(score):
        raise SearchFailed(f"{at}: expected a number or a numeric string, got {str(value)[:40]!r}", field=at)
    return score


def _has(item: Mapping[str, Any], path: str) -> bool:
    data: Any = item
    for part in [p for p in path.split(".") if p]:
        if not isinstance(data, Mapping) or part not in data:
            return False
        data = data[part]
    return True


def _text(item: Any, path: str, where: str) -> str:
    if not path or not isinstance(item, Mapping) or not _has(item, path):
        return ""
    value, _ = _walk(item, path, where)
    return value if isinstance(value, str) else json.dumps(value)


def _mapped(item: Any, spec: Answer, at: str) -> Mapped:
    """One result (``at`` in the answer) read through ``spec``, every field checked."""
    if not isinstance(item, Mapping):
        raise SearchFailed(f"{at} is {type(item).__name__}, not an object", field=at)
    return Mapped(_id(item, spec.id, at), _score(item, spec.score, at), _text(item, spec.text, at))


def _excluded(item: Mapping[str, Any], exclude: tuple[tuple[str, Any], ...]) -> bool:
    """Whether each of ``exclude``'s fields has its value in ``item``."""
    for key, value in exclude:
        if not item.get(key) == value:
            return False
    return True


_new_mapped = tuple.__new__


def _plain_run(items: Sequence[Any], spec: Answer, exclude: tuple[tuple[str, Any], ...]) -> tuple[list[Mapped], int]:
    """:func:`_mapped` of the leading results in plain JSON whose fields are each one key (a dict; the id a
    non-empty string or an integer, the score a number, the text a string), in one loop of exact type tests (an
    eval reads a hundred a query), and how many were read: the first that is not plain is left to
    :func:`_mapped`, which reads it or refuses it, naming the field."""
    id_key, score_key, text_key = spec.id, spec.score, spec.text
    one_key, one_value = exclude[0] if len(exclude) == 1 else ("", None)
    out: list[Mapped] = []
    append = out.append
    for i, item in enumerate(items):
        if type(item) is not dict:
            return out, i
        if exclude and (item.get(one_key) == one_value if one_key else _excluded(item, exclude)):
            continue
        doc = item.get(id_key)
        if type(doc) is int:
            doc = str(doc)
        elif type(doc) is not str or not doc:
            return out, i
        score = item.get(score_key) if score_key else None
        if type(score) is int:
            score = float(score)
        elif score is not None and (type(score) is not float or score != score):
            return out, i
        text = item.get(text_key, "") if text_key else ""
        if type(text) is not str:
            return out, i
        append(_new_mapped(Mapped, (doc, score, text)))
    return out, len(items)


def map_results(items: Sequence[Any], spec: Answer, where: str, origin: str) -> list[Mapped]:
    """Each result read through ``spec``; a refusal names the result's place in the answer."""
    plain = bool(spec.id) and "{" not in spec.id and not any("." in path for path in (spec.id, spec.score, spec.text))
    exclude = tuple(spec.exclude.items())
    out, start = _plain_run(items, spec, exclude) if plain else ([], 0)
    while start < len(items):
        item = items[start]
        try:
            if not (exclude and isinstance(item, Mapping) and _excluded(item, exclude)):
                out.append(_mapped(item, spec, f"{where}[{start}]" if where else f"[{start}]"))
        except SearchFailed as exc:
            raise SearchFailed(f"{origin}: {exc.message}", field=exc.field) from None
        start += 1
        if plain:  # the results after an odd one are most likely plain again
            more, read = _plain_run(items[start:], spec, exclude)
            out.extend(more)
            start += read
    return out


def text_answer(blocks: Sequence[Any], origin: str) -> Any:
    """The JSON inside an MCP result's first text block (Concept-RAG answers a JSON array there)."""
    for i, block in enumerate(blocks):
        text = getattr(block, "text", None)
        if isinstance(text, str):
            try:
                return json.loads(text)
            except json.JSONDecodeError as exc:
                raise SearchFailed(f"{origin}: content[{i}].text is not JSON ({exc.msg} at {exc.pos})",
                                   field=f"content[{i}].text") from None
    raise SearchFailed(f"{origin}: the tool's answer has no text block", field="content")


def line_answer(blocks: Sequence[Any], spec: Answer, origin: str) -> list[dict[str, str]]:
    """The results in an MCP result's text blocks, one per line ``spec.line`` matches (its named groups the
    fields), for a tool answering text meant for a person. A line matching ``spec.error`` is the query's failure,
    named with the line, so a tool's error in text is never read as an empty ranking."""
    line, error = re.compile(spec.line), re.compile(spec.error) if spec.error else None
    found = []
    for i, block in enumerate(blocks):
        text = getattr(block, "text", None)
        for n, row in enumerate(text.splitlines() if isinstance(text, str) else ()):
            if error is not None and error.search(row):
                raise SearchFailed(f"{origin}: content[{i}].text line {n + 1} is an error: {row[:200]}",
                                   field=f"content[{i}].text")
            match = line.search(row)
            if match:
                found.append({k: v for k, v in match.groupdict().items() if v is not None})
    return found


def _relevance(score: float | None) -> float:
    """The service's score as our response's relevance (a probability the analysis calibrates) when it is one,
    in 0-1; otherwise (none, or a BM25 score of 12.5) 0: the order alone is the ranking."""
    return score if score is not None and 0.0 <= score <= 1.0 else 0.0


def response_json(mapped: Sequence[Mapped], depth: int) -> dict[str, Any]:
    """Our response's JSON from mapped results: the first of each id (a service answering chunks, a document known
    by several, is scored once per document, at its best place), at most ``depth``; the order is the ranking."""
    seen: set[str] = set()
    results: list[dict[str, Any]] = []
    append = results.append
    for doc, score, text in mapped:
        if doc in seen:
            continue
        seen.add(doc)
        append({"id": doc, "content": text, "score": _relevance(score), "confidenceBand": "low",
                "component_type": "chunk"})
        if len(results) == depth:
            break
    return {"results": results}
