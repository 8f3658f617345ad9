"""HAWKI's RagSearcher: the MCP tool ``query-search`` at ``/mcp/hawki`` (seed ``000``).

Request: ``query`` (required), ``top_k`` an integer in [1, 50], default 5 (HAWKI's tool validates: anything else
is refused). Answer: ``{results, kg, rewrite_terms}``; a passage is ``{metadata, content}`` with
``metadata.tags`` a comma-separated string, a fact ``{metadata, component_type: "relation", subject, relation,
object}``; ``kg`` the triples ``{subject, relation, object}``. Both our passages and facts take ``top_k``
places, as HAWKI's do.
"""

from __future__ import annotations

from typing import Any

from searchtrace.errors import ValidationError
from searchtrace.retriever.response import Hit, Metadata, RelationHit, SearchResponse
from searchtrace.retriever.serve.dialects.speaker import Speaker, Tool, ToolAnswer, json_answer

PATH = "/mcp/hawki"
TOOL = "query-search"
MAX_TOP_K = 50
DEFAULT_TOP_K = 5

SCHEMA = {"type": "object", "required": ["query"], "properties": {
    "query": {"type": "string", "description": "what to search for"},
    "top_k": {"type": "integer", "minimum": 1, "maximum": MAX_TOP_K, "default": DEFAULT_TOP_K,
              "description": "results to return (passages and relation hits together)"}}}


def request_of(args: dict[str, Any]) -> dict[str, Any]:
    """Our request from the tool's arguments (other arguments are not HAWKI's: left out, as its validator does)."""
    top_k = args.get("top_k", DEFAULT_TOP_K)
    if isinstance(top_k, float) and top_k.is_integer():
        top_k = int(top_k)
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise ValidationError(f"top_k must be an integer in [1, {MAX_TOP_K}], got {top_k!r:.40}", field="top_k")
    if "query" not in args:
        raise ValidationError("query: required", field="query")
    return {"query": args["query"], "top_k": top_k}


def metadata_of(m: Metadata) -> dict[str, Any]:
    """HAWKI's metadata: ours, with the tags as one comma-separated string."""
    return {"language": m.language, "title": m.title, "url": m.url, "timestamp": m.timestamp,
            "tags": ",".join(m.tags), "collection": m.collection}


def result_of(hit: Hit) -> dict[str, Any]:
    if isinstance(hit, RelationHit):
        return {"metadata": metadata_of(hit.metadata), "component_type": "relation", "subject": hit.subject,
                "relation": hit.relation, "object": hit.object, "content": hit.content}
    return {"metadata": metadata_of(hit.metadata), "component_type": "chunk", "content": hit.content}


def answer_of(response: SearchResponse) -> dict[str, Any]:
    """HAWKI's ``filterResponse()`` shape from our response."""
    return {"results": [result_of(h) for h in response.results],
            "kg": [{"subject": t.subject, "relation": t.relation, "object": t.object} for t in response.kg],
            "rewrite_terms": list(response.rewrite_terms)}


def mount(app: Any, speaker: Speaker) -> None:
    """``query-search`` at ``/mcp/hawki``."""

    async def query_search(args: dict[str, Any]) -> ToolAnswer:
        return json_answer(answer_of(await speaker.search(request_of(args))))

    speaker.mcp(app, PATH, "hawki", {TOOL: Tool("Search the knowledge base (passages and knowledge-graph "
                                                "relations); returns results, kg and rewrite_terms.",
                                                SCHEMA, query_search)})
