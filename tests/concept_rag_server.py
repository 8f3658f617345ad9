"""A Concept-RAG stand-in over MCP stdio (run as a child): ``broad_chunks_search {text}`` answers a JSON array in a
text block, ``score`` a string, no chunk id (a document is its ``source``), two chunks per document.

The query ``fail please`` answers a tool error (``isError``), ``slow please`` after 5 s, ``ping please`` and
``roots please`` after asking the client that, ``image please`` with an image block besides; the query ``$CONCEPT_RAG_DIE_ON`` makes the child
exit mid-call. When ``CONCEPT_RAG_PIDFILE`` is set the child
writes its pid there, so a test can kill it; ``CONCEPT_RAG_LOG`` appends each call's arguments and ``_meta``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

sys.path.insert(0, str(Path(__file__).resolve().parent))
from seed_servers import ranking  # noqa: E402

SHOWN = 12
"""Documents per answer (the real server cuts at its largest score gap: a fixed count stands in)."""


async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[types.Tool(name="broad_chunks_search", input_schema={"type": "object"})])


async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = dict(params.arguments or {})
    log = os.environ.get("CONCEPT_RAG_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"args": args, "meta": dict(ctx.meta or {})}) + "\n")
    if args.get("text") and args.get("text") == os.environ.get("CONCEPT_RAG_DIE_ON"):
        os._exit(1)  # the child dies mid-call, as a crashed server does
    if args.get("text") == "slow please":
        await anyio.sleep(5)
    if args.get("text") in ("ping please", "roots please"):  # the server asks the client back, mid-call
        from mcp.shared.message import ServerMessageMetadata

        ask = types.PingRequest() if args["text"] == "ping please" else types.ListRootsRequest()
        try:
            await ctx.session.send_request(ask, types.EmptyResult if args["text"] == "ping please"
                                           else types.ListRootsResult,
                                           metadata=ServerMessageMetadata(related_request_id=ctx.request_id))
        except Exception as exc:  # the client refused (no roots): the answer says so
            return types.CallToolResult(content=[types.TextContent(text=f"asked back: {exc}")], is_error=True)
    if params.name != "broad_chunks_search" or args.get("text") == "fail please":
        return types.CallToolResult(content=[types.TextContent(text='{"error": {"code": "SEARCH_FAILED"}}')],
                                    is_error=True)
    chunks = []
    for i, source in enumerate(ranking(args["text"])[:SHOWN]):
        for part in range(2):
            chunks.append({"text": f"{source} part {part}", "source": source,
                           "score": f"{1 - (2 * i + part) / 100:.3f}", "expanded_terms": []})
    image = [types.ImageContent(data="aGk=", mime_type="image/png")] if args["text"] == "image please" else []
    return types.CallToolResult(content=[types.TextContent(text=json.dumps(chunks)), *image])


async def main() -> None:
    pidfile = os.environ.get("CONCEPT_RAG_PIDFILE")
    if pidfile:
        Path(pidfile).write_text(str(os.getpid()), encoding="utf-8")
    server: Server[Any] = Server("concept-rag", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
