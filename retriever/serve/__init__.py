"""Serving the retriever: an HTTP API (FastAPI on uvicorn) and MCP tools, every call one trace.

``searchtrace serve`` (:mod:`.run`) opens a :class:`~.service.Service` over one or more
datasets and serves it over HTTP (:mod:`.http`, with MCP mounted at ``/mcp``) or
MCP over stdio (:mod:`.mcp_tools`). Limits and the API key: :mod:`.config`,
:mod:`.limits`; query embeddings batched across requests: :mod:`.batcher`; the MCP session
id minted for clients that use one: :mod:`.sessions`.
"""
