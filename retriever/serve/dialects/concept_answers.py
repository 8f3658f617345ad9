"""Concept-RAG's answers built from our records: its tools' schemas, and each answer's JSON shape as the seed
text gives it (``../shared/seeds/004_*``). Scores are strings with three decimals."""

from __future__ import annotations

from typing import Any

from searchtrace.errors import ValidationError
from searchtrace.retriever.response import SearchResponse
from searchtrace.retriever.serve.dialects.concept_catalog import Catalog, Category, Concept, SourceDoc

PRIMARY_SHOWN = 10
"""Primary concepts listed per source (``primary_concepts``, ``primaryConcepts``)."""
PREVIEW_CHARS = 200
"""A category listing's ``preview``: the document's text up to this many characters."""

_TEXT = {"type": "string", "description": "Search query"}
_CONCEPTS = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
             "description": "Concept(s) to find"}
SCHEMAS: dict[str, dict[str, Any]] = {
    "catalog_search": {"type": "object", "properties": {"text": _TEXT}, "required": ["text"]},
    "broad_chunks_search": {"type": "object", "properties": {"text": _TEXT}, "required": ["text"]},
    "chunks_search": {"type": "object", "properties": {
        "text": _TEXT, "source": {"type": "string", "description": "Full file path of document"}},
        "required": ["text", "source"]},
    "concept_search": {"type": "object", "properties": {
        "concept": {"type": "string", "description": "Concept to search for"},
        "source_filter": {"type": "string", "description": "Filter by source path"}}, "required": ["concept"]},
    "extract_concepts": {"type": "object", "properties": {
        "document_query": {"type": "string", "description": "Document title or keywords"},
        "format": {"type": "string", "enum": ["json", "markdown"], "default": "json"},
        "include_summary": {"type": "boolean", "default": True}}, "required": ["document_query"]},
    "source_concepts": {"type": "object", "properties": {
        "concept": _CONCEPTS, "include_metadata": {"type": "boolean", "default": True}}, "required": ["concept"]},
    "concept_sources": {"type": "object", "properties": {
        "concept": _CONCEPTS, "include_metadata": {"type": "boolean", "default": True}}, "required": ["concept"]},
    "category_search": {"type": "object", "properties": {
        "category": {"type": "string", "description": "Category name, ID, or alias"},
        "includeChildren": {"type": "boolean", "default": False}}, "required": ["category"]},
    "list_categories": {"type": "object", "properties": {
        "sortBy": {"type": "string", "enum": ["popularity", "name"], "default": "popularity"},
        "limit": {"type": "number", "default": 50}, "search": {"type": "string"}}},
    "list_concepts_in_category": {"type": "object", "properties": {
        "category": {"type": "string", "description": "Category name, ID, or alias"},
        "sortBy": {"type": "string", "enum": ["documentCount", "name"], "default": "documentCount"},
        "limit": {"type": "number", "default": 50}}, "required": ["category"]},
}
DESCRIPTIONS = {
    "catalog_search": "Search document summaries and metadata to discover relevant documents.",
    "broad_chunks_search": "Search across all document chunks using hybrid search.",
    "chunks_search": "Search within a single known document.",
    "concept_search": "Find chunks associated with a concept, organized hierarchically.",
    "extract_concepts": "Export concepts from a specific document.",
    "source_concepts": "Find documents where concept(s) appear. Returns merged/union list.",
    "concept_sources": "Get sources for each concept separately (per-concept arrays).",
    "category_search": "Find documents by category.",
    "list_categories": "List all available categories.",
    "list_concepts_in_category": "Find concepts in a category's documents.",
}


def score(value: float) -> str:
    return f"{value:.3f}"


def passes(doc_id: str, source_filter: str | None) -> bool:
    """A source kept by ``source_filter`` (a part of its path, any case; None keeps every one)."""
    return source_filter is None or source_filter.casefold() in doc_id.casefold()


# -- search tools ----------------------------------------------------------------------------------------------


def chunks(response: SearchResponse) -> list[dict[str, Any]]:
    """``broad_chunks_search``: the passages shown (relation hits are facts, not chunks: left out)."""
    terms = list(response.rewrite_terms)
    return [{"text": r.content, "source": r.id, "score": score(r.score), "expanded_terms": terms}
            for r in response.chunks]


def documents(response: SearchResponse, catalog: Catalog) -> list[dict[str, Any]]:
    """``catalog_search``: the documents of the passages shown, with their summaries."""
    terms = list(response.rewrite_terms)
    return [{"source": r.id, "summary": catalog.sources[r.id].summary if r.id in catalog.sources else "",
             "score": score(r.score), "expanded_terms": terms} for r in response.chunks]


def source_chunks(response: SearchResponse, catalog: Catalog) -> list[dict[str, Any]]:
    """``chunks_search``: the passages shown within one source, with their concepts."""
    out = []
    for r in response.chunks:
        ids = list(catalog.sources[r.id].concept_ids) if r.id in catalog.sources else []
        out.append({"text": r.content, "source": r.id, "title": r.title, "concepts": catalog.names(ids),
                    "concept_ids": ids})
    return out


# -- concepts ---------------------------------------------------------------------------------------------------


def concept(found: Concept, related: list[Concept], primary: list[str], response: SearchResponse | None,
            catalog: Catalog, source_filter: str | None) -> dict[str, Any]:
    """``concept_search``: the sources naming the concept (primary) and those naming a related one, and the
    primary sources' chunks ranked by our search for the concept's name. A document is one page (page 1); a
    chunk's ``concept_density`` is the concept's share of the chunk's concepts."""
    sources = [{"title": catalog.sources[d].title, "pages": [1], "match_type": "primary", "via_concept": None}
               for d in primary]
    seen = set(primary)
    for other in related:
        for d in other.doc_ids:
            if d not in seen and passes(d, source_filter):
                seen.add(d)
                sources.append({"title": catalog.sources[d].title, "pages": [1], "match_type": "related",
                                "via_concept": other.name})
    shown = response.chunks if response is not None else ()
    chunk_rows = []
    for r in shown:
        ids = catalog.sources[r.id].concept_ids
        chunk_rows.append({"text": r.content, "title": r.title, "page": 1,
                           "concept_density": score(1 / len(ids) if ids else 0.0), "concepts": catalog.names(ids)})
    return {"concept": found.name, "concept_id": found.id, "summary": _concept_summary(found, related),
            "related_concepts": [c.name for c in related], "synonyms": list(found.aliases), "broader_terms": [],
            "narrower_terms": [],
            "sources": sources, "chunks": chunk_rows,
            "stats": {"total_documents": len(seen), "total_chunks": len(primary),
                      "sources_returned": len(sources), "chunks_returned": len(chunk_rows)},
            "score": score(shown[0].score if shown else 0.0)}


def _concept_summary(found: Concept, related: list[Concept]) -> str:
    near = ", ".join(c.name for c in related[:5])
    return (f"{found.name}: named in {len(found.doc_ids)} document(s)" + (f"; related to {near}" if near else "")
            + ".")


def named_document(query: str, catalog: Catalog) -> SourceDoc | None:
    """The document whose id or title is ``query`` (any case), if one is."""
    if query in catalog.sources:
        return catalog.sources[query]
    folded = query.strip().casefold()
    return next((d for d in catalog.sources.values() if d.title.casefold() == folded), None)


def extraction(doc: SourceDoc, catalog: Catalog, include_summary: bool, form: str) -> dict[str, Any] | str:
    """``extract_concepts``: a document's concepts (primary), those one relation away (related), its category."""
    primary = catalog.names(doc.concept_ids)
    own = set(doc.concept_ids)
    related: dict[int, str] = {}
    for c in (catalog.concepts[i] for i in doc.concept_ids):
        for other in catalog.related(c):
            if other.id not in own:
                related.setdefault(other.id, other.name)
    out = {"document": doc.id, "document_hash": doc.hash, "total_concepts": len(primary),
           "primary_concepts": primary, "related_concepts": list(related.values()),
           "categories": [doc.collection] if doc.collection else [],
           "summary": doc.summary if include_summary else ""}
    return out if form == "json" else _markdown(out)


def _markdown(out: dict[str, Any]) -> str:
    rows = ["| Concept | Kind |", "|---|---|"]
    rows += [f"| {c} | primary |" for c in out["primary_concepts"]]
    rows += [f"| {c} | related |" for c in out["related_concepts"]]
    head = [f"# Concepts of {out['document']}", "", f"Categories: {', '.join(out['categories']) or '-'}", ""]
    if out["summary"]:
        head += [out["summary"], ""]
    return "\n".join(head + rows) + "\n"


def _source_row(doc: SourceDoc, catalog: Catalog, include_metadata: bool) -> dict[str, Any]:
    row: dict[str, Any] = {"title": doc.title, "author": "", "year": doc.year, "source_path": doc.id}
    if include_metadata:
        row["summary"] = doc.summary
    row["primary_concepts"] = catalog.names(doc.concept_ids[:PRIMARY_SHOWN])
    row["categories"] = [doc.collection] if doc.collection else []
    return row


def union_sources(names: list[str], catalog: Catalog, include_metadata: bool) -> dict[str, Any]:
    """``source_concepts``: every source naming one of the concepts, with which (``concept_indices``)."""
    found = [catalog.concept(n) for n in names]
    indices: dict[str, list[int]] = {}
    for i, c in enumerate(found):
        for d in c.doc_ids if c is not None else ():
            indices.setdefault(d, []).append(i)
    sources = []
    for d, which in indices.items():
        row = _source_row(catalog.sources[d], catalog, include_metadata)
        sources.append({**row, "concept_indices": which})
    return {"concepts_searched": names, "concepts_found": [n for n, c in zip(names, found) if c is not None],
            "concepts_not_found": [n for n, c in zip(names, found) if c is None], "source_count": len(sources),
            "sources": sources}


def per_concept_sources(names: list[str], catalog: Catalog, include_metadata: bool) -> dict[str, Any]:
    """``concept_sources``: ``results[i]`` the sources of ``concepts_searched[i]`` (``[]`` when not found)."""
    results = []
    for n in names:
        c = catalog.concept(n)
        results.append([_source_row(catalog.sources[d], catalog, include_metadata)
                        for d in (c.doc_ids if c is not None else ())])
    return {"concepts_searched": names, "results": results}


# -- categories ---------------------------------------------------------------------------------------------------


def _concept_ids(category: Category, catalog: Catalog) -> dict[int, int]:
    """Each concept of the category's documents and how many of them name it."""
    counts: dict[int, int] = {}
    for d in category.doc_ids:
        for i in catalog.sources[d].concept_ids:
            counts[i] = counts.get(i, 0) + 1
    return counts


def _category_head(category: Category) -> dict[str, Any]:
    return {"id": category.id, "name": category.name, "description": f"The {category.name} collection.",
            "hierarchy": [category.name]}


def categories(catalog: Catalog, sort: str, limit: int, search: str | None) -> dict[str, Any]:
    """``list_categories``: the collections (flat: no parents), by documents or name."""
    chosen = [c for c in catalog.categories if search is None or search.casefold() in c.name.casefold()]
    chosen.sort(key=(lambda c: (-len(c.doc_ids), c.name)) if sort == "popularity" else (lambda c: c.name))
    rows = [{**_category_head(c), "aliases": [], "parent": None,
             "statistics": {"documents": len(c.doc_ids), "chunks": len(c.doc_ids),
                            "concepts": len(_concept_ids(c, catalog))}, "relatedCategories": []}
            for c in chosen[:limit]]
    return {"summary": {"totalCategories": len(catalog.categories), "categoriesReturned": len(rows),
                        "rootCategories": len(catalog.categories), "totalDocuments": len(catalog.sources),
                        "sortedBy": sort, "searchQuery": search}, "categories": rows}


def category_documents(category: Category, catalog: Catalog, include_children: bool) -> dict[str, Any]:
    """``category_search``: every document of the collection (collections have no children)."""
    docs = [catalog.sources[d] for d in category.doc_ids]
    return {"category": {**_category_head(category), "aliases": [], "relatedCategories": []},
            "statistics": {"totalDocuments": len(docs), "totalChunks": len(docs),
                           "totalConcepts": len(_concept_ids(category, catalog)), "documentsReturned": len(docs)},
            "documents": [{"title": d.title, "preview": d.text[:PREVIEW_CHARS],
                           "primaryConcepts": catalog.names(d.concept_ids[:PRIMARY_SHOWN])} for d in docs],
            "includeChildren": include_children, "categoriesSearched": [category.name]}


def category_concepts(category: Category, catalog: Catalog, sort: str, limit: int) -> dict[str, Any]:
    """``list_concepts_in_category``: the concepts of the collection's documents, ``weight`` the share of its
    documents naming each."""
    counts = _concept_ids(category, catalog)
    if sort not in ("documentCount", "name"):
        raise ValidationError(f"sortBy: expected documentCount or name, got {sort!r}", field="sortBy")
    order = sorted(counts, key=(lambda i: (-counts[i], catalog.concepts[i].name)) if sort == "documentCount"
                   else (lambda i: catalog.concepts[i].name))
    total = len(category.doc_ids)
    rows = [{"id": i, "name": catalog.concepts[i].name, "documentCount": counts[i],
             "weight": round(counts[i] / total, 3) if total else 0.0} for i in order[:limit]]
    return {"category": _category_head(category),
            "statistics": {"totalDocuments": total, "totalChunks": total, "totalUniqueConcepts": len(counts),
                           "conceptsReturned": len(rows)},
            "concepts": rows, "sortedBy": sort,
            "note": "Concepts are the knowledge graph's entities; a document is one chunk."}
