"""The search response as text an LLM reads well (the MCP tools' text content)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from searchtrace.errors import SearchtraceError
from searchtrace.retriever.response import Hit, RelationHit, RetryHints, SearchResponse

SNIPPET_CHARS = 160


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """One line of at most ``limit`` characters: the whole words that fit, then an ellipsis (a first word
    longer than the line is the one thing cut inside)."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    room = flat[:limit - 1]
    cut = room if flat[limit - 1] == " " else room.rsplit(" ", 1)[0] if " " in room else room
    return cut + "…"


def result_line(rank: int, result: Hit) -> str:
    """``1. Title — 87% relevant · high — snippet`` or, for a relation, ``subject —relation→ object [doc]``
    (the documents the fact came from, so a reader can fetch its source)."""
    share = f"{round(100 * float(result.score))}% relevant · {result.band.value}"
    if isinstance(result, RelationHit):
        sources = f" [{', '.join(result.doc_ids)}]" if result.doc_ids else ""
        return f"{rank}. {result.subject} —{result.relation}→ {result.object}{sources} ({share})"
    title = result.title or result.id
    content = result.content
    if title and content.startswith(title):
        content = content[len(title):]
    return f"{rank}. {title} [{result.id}] — {share} — {snippet(content)}"


def retry_footer(hints: RetryHints | None) -> str:
    """``No confident match — try: …`` from the retry hints (what to search next)."""
    tries: list[str] = []
    if hints:
        tries += [f'"{query}"' for query in (hints.narrower_query, hints.broader_query) if query]
        if hints.related_terms:
            tries.append("related terms: " + ", ".join(hints.related_terms[:6]))
        if hints.detected_entities and not hints.related_terms:
            tries.append("entities: " + ", ".join(hints.detected_entities[:6]))
    return "No confident match — try: " + ("; ".join(tries) if tries else "rephrasing with more specific terms")


def response_text(response: SearchResponse) -> str:
    """The whole response: one line per result, relation lines, the retry footer when weak, the trace."""
    results = response.results
    lines = [result_line(i, r) for i, r in enumerate(results, 1)] or ["No results."]
    if response.kg and not response.relations:
        lines += [f"   {t.subject} —{t.relation}→ {t.object}" for t in response.kg[:5]]
    if response.no_confident_results:
        lines.append(retry_footer(response.retry_hints))
    if response.degraded:
        lines.append("Degraded (skipped): " + ", ".join(response.degraded))
    if response.trace_id:
        url = response.trace_url
        lines.append(f"trace {response.trace_id}" + (f" {url}" if url else ""))
    return "\n".join(lines)


def documents_text(documents: Sequence[Mapping[str, Any]]) -> str:
    """Documents or chunks, each as a header line and its text."""
    out = []
    for d in documents:
        title = d.get("title") or (d.get("metadata") or {}).get("title") or ""
        body = d.get("text") if "text" in d else d.get("content", "")
        out.append(f"[{d.get('id')}] {title}\n{body}".rstrip())
    return "\n\n".join(out)


def error_text(error: SearchtraceError) -> str:
    """``VALIDATION_ERROR (top_k): top_k: ...``."""
    field = f" ({error.field})" if error.field else ""
    return f"{error.code.value}{field}: {error.message}"
