"""The search response as text an LLM reads well (the MCP tools' text content)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

SNIPPET_CHARS = 160


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """One line of at most ``limit`` characters, cut at a word with an ellipsis."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit - 1].rsplit(" ", 1)[0] or flat[:limit - 1]
    return cut + "…"


def result_line(rank: int, result: Mapping[str, Any]) -> str:
    """``1. Title — 87% relevant · high — snippet`` or, for a relation, ``subject —relation→ object``."""
    share = f"{round(100 * float(result.get('score', 0.0)))}% relevant · {result.get('confidenceBand', '?')}"
    if result.get("component_type") == "relation":
        return f"{rank}. {result.get('subject')} —{result.get('relation')}→ {result.get('object')} ({share})"
    title = (result.get("metadata") or {}).get("title") or result.get("id", "")
    content = str(result.get("content", ""))
    if title and content.startswith(title):
        content = content[len(title):]
    return f"{rank}. {title} [{result.get('id')}] — {share} — {snippet(content)}"


def retry_footer(hints: Mapping[str, Any] | None) -> str:
    """``No confident match — try: …`` from the retry hints (what to search next)."""
    tries: list[str] = []
    if hints:
        for key in ("narrowerQuery", "broaderQuery"):
            if hints.get(key):
                tries.append(f'"{hints[key]}"')
        related: Sequence[str] = hints.get("relatedTerms") or ()
        if related:
            tries.append("related terms: " + ", ".join(related[:6]))
        entities: Sequence[str] = hints.get("detectedEntities") or ()
        if entities and not related:
            tries.append("entities: " + ", ".join(entities[:6]))
    return "No confident match — try: " + ("; ".join(tries) if tries else "rephrasing with more specific terms")


def response_text(response: Mapping[str, Any]) -> str:
    """The whole response: one line per result, relation lines, the retry footer when weak, the trace."""
    results = response.get("results") or []
    lines = [result_line(i, r) for i, r in enumerate(results, 1)] or ["No results."]
    kg = response.get("kg") or []
    if kg and not any(r.get("component_type") == "relation" for r in results):
        lines += [f"   {t['subject']} —{t['relation']}→ {t['object']}" for t in kg[:5]]
    if response.get("noConfidentResults"):
        lines.append(retry_footer(response.get("retryHints")))
    if response.get("degraded"):
        lines.append("Degraded (skipped): " + ", ".join(response["degraded"]))
    trace = response.get("traceId")
    if trace:
        url = response.get("traceUrl")
        lines.append(f"trace {trace}" + (f" {url}" if url else ""))
    return "\n".join(lines)


def documents_text(documents: Sequence[Mapping[str, Any]]) -> str:
    """Documents or chunks, each as a header line and its text."""
    out = []
    for d in documents:
        title = d.get("title") or (d.get("metadata") or {}).get("title") or ""
        body = d.get("text") if "text" in d else d.get("content", "")
        out.append(f"[{d.get('id')}] {title}\n{body}".rstrip())
    return "\n\n".join(out)


def error_text(error: Mapping[str, Any]) -> str:
    """``VALIDATION_ERROR (top_k): top_k: ...``."""
    field = f" ({error['field']})" if error.get("field") else ""
    return f"{error.get('code')}{field}: {error.get('message')}"
