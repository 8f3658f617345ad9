"""Another retriever's searches as lines fitted to a width: under its trace in ``traces list``, with their
documents in ``traces show``, and the per-service document-id keys of ``traces id-key``.

Every line is one line (control characters made spaces) and cut with an ellipsis at the width; None (``--wide``)
cuts nothing. An unidentified document is shown as such, never given an id; a missing score as ``-``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from searchtrace.terminal import fit, one_line
from searchtrace.traces.spans.foreign import Document
from searchtrace.traces.store.protocol import TraceStoreProtocol
from searchtrace.traces.store.records import SearchFilter, SearchRecord, TraceSummary
from searchtrace.traces.views.listing import table

__all__ = ["UNIDENTIFIED", "document_lines", "id_key_lines", "json_with_searches", "search_lines", "searches_of",
           "table_with_searches"]

UNIDENTIFIED = "(no id)"
"""How an unidentified document is shown."""
_SHOWN_IDS = 5


def searches_of(store: TraceStoreProtocol, summaries: Sequence[TraceSummary]) -> dict[str, list[SearchRecord]]:
    """Each listed foreign trace's searches (ids and scores; their text not read)."""
    found: dict[str, list[SearchRecord]] = {}
    ids = tuple(s.trace_id for s in summaries if s.foreign)
    for search in store.searches(SearchFilter(trace_ids=ids, contents=False)) if ids else ():
        found.setdefault(search.trace_id, []).append(search)
    return found


def table_with_searches(summaries: Sequence[TraceSummary], searches: Mapping[str, Sequence[SearchRecord]],
                        columns: int | None) -> list[str]:
    """``traces list``'s table, each foreign trace's line followed by one line per search it ran."""
    header, *rows = table(summaries, columns)
    out = [header]
    for summary, line in zip(summaries, rows):
        out.append(line)
        out.extend(search_lines(searches.get(summary.trace_id, ()), columns))
    return out


def json_with_searches(summaries: Sequence[TraceSummary], searches: Mapping[str, Sequence[SearchRecord]]) -> str:
    """``traces list --json``: a foreign trace's object carries its ``searches`` (query, ids, scores)."""
    out = []
    for s in summaries:
        item = s.to_dict()
        if s.foreign:
            item["searches"] = [{"span_id": r.span_id, "query": r.query, "doc_ids": list(r.doc_ids),
                                 "scores": list(r.scores), "unidentified": r.unidentified}
                                for r in searches.get(s.trace_id, ())]
        out.append(item)
    return json.dumps(out, indent=2, ensure_ascii=False)


def search_lines(searches: Sequence[SearchRecord], columns: int | None, indent: str = "  ") -> list[str]:
    """One line per search of a trace: its query and the ids of its documents (the first few), under the trace's
    line in the list."""
    return [_fitted(f"{indent}search {_query(s)}  {_ids(s.documents)}{_unidentified(s)}", columns)
            for s in searches]


def document_lines(search: SearchRecord, columns: int | None) -> list[str]:
    """A search's heading (service, project, query, top k, data source), then one line per document: its rank,
    id, score and text cut to the line."""
    where = "/".join(x for x in (search.service, search.project) if x) or "unknown service"
    extra = "".join(f"  {name}={value}" for name, value in (("top_k", search.top_k),
                                                              ("source", search.data_source)) if value is not None)
    lines = [_fitted(f"search {search.span_id} ({search.convention}, {where})  {_query(search)}{extra}"
                     f"{_unidentified(search)}", columns)]
    width = max((len(d.id or UNIDENTIFIED) for d in search.documents), default=0)
    for i, doc in enumerate(search.documents, 1):
        score = "-" if doc.score is None else f"{doc.score:.4g}"
        text = one_line(doc.content) if doc.content else ""
        lines.append(_fitted(f"  {i:>3}. {(doc.id or UNIDENTIFIED):<{width}}  {score:>8}  {text}".rstrip(), columns))
    if not search.documents:
        lines.append(_fitted("  no documents", columns))
    return lines


def id_key_lines(keys: Mapping[str, str], columns: int | None) -> list[str]:
    """``SERVICE  KEY`` per service, aligned."""
    width = max((len(s) for s in keys), default=0)
    return [_fitted(f"{one_line(service):<{width}}  {one_line(key)}", columns) for service, key in keys.items()]


def _query(s: SearchRecord) -> str:
    return "(no query)" if s.query is None else repr(one_line(s.query))


def _ids(documents: Sequence[Document]) -> str:
    shown = [one_line(d.id) if d.id is not None else UNIDENTIFIED for d in documents[:_SHOWN_IDS]]
    more = f", … (+{len(documents) - _SHOWN_IDS})" if len(documents) > _SHOWN_IDS else ""
    return f"[{', '.join(shown)}{more}]"


def _unidentified(s: SearchRecord) -> str:
    return f"  {s.unidentified} of {len(s.documents)} without an id" if s.unidentified else ""


def _fitted(line: str, columns: int | None) -> str:
    return line if columns is None else fit(line, columns)
