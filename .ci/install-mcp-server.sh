#!/usr/bin/env bash
# Install the third-party MCP search server the target tests evaluate (tests/system/test_third_party_mcp.py):
# whoosh-rag-mcp, full-text search (Whoosh, BM25F) over a folder of Markdown files, no model. It gets a venv of
# its own, .mcp-server-venv/ (it pins Whoosh and brings its own mcp), so it never changes ours. Idempotent;
# prints the server's command, which .ci/run exports as SEARCHTRACE_MCP_SERVER.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.mcp-server-venv
if [ ! -x "$venv/bin/whoosh-rag-server" ]; then
    python3 -m venv "$venv"
    # mcp<2: the server is written against the 1.x low-level Server (its list_tools decorator is gone in 2.x)
    "$venv/bin/pip" install -q --disable-pip-version-check "whoosh-rag-mcp==0.1.2" "mcp>=1.0,<2"
fi
echo "$PWD/$venv/bin/whoosh-rag-server"
