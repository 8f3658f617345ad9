"""``searchtrace serve``: flags, and running the service over HTTP (uvicorn) or MCP over stdio."""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path
from typing import Any

from searchtrace import environment as env_names
from searchtrace.errors import ExitCode
from searchtrace.retriever.arguments import add_retriever_arguments, config_from_arguments, show_progress
from searchtrace.retriever.serve.config import ServeConfig

__all__ = ["add_serve_parser", "cmd_serve"]


def add_serve_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``serve`` to the main parser's subcommands."""
    p = sub.add_parser("serve", help="serve search over HTTP (and MCP at /mcp), or MCP over stdio",
                       description="Serve one or more datasets; a request's 'dataset' field picks one by folder "
                                   "name (default the first). Every call is a trace in the home's trace store.")
    p.add_argument("datasets", nargs="+", metavar="DATASET",
                   help="dataset folders to serve (BEIR layout; indexed on first use); a request's dataset field "
                        "picks one by folder name, default the first")
    p.add_argument("--host", help="address to bind (default 127.0.0.1; any other needs SEARCHTRACE_API_KEY)")
    p.add_argument("--port", type=int, help="port (default 8765; 0 = any free port)")
    p.add_argument("--mcp", choices=["stdio"], help="serve MCP over stdin/stdout instead of HTTP")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="seconds a search may take before 504 (default: $SEARCHTRACE_SERVE_TIMEOUT or 2)")
    p.add_argument("--max-inflight", type=int, metavar="N",
                   help="searches at once; more answer 429 (default: $SEARCHTRACE_SERVE_MAX_INFLIGHT or 32)")
    p.add_argument("--cors-origins", metavar="URL,...", help="origins allowed from a browser (default: none)")
    p.add_argument("--allowed-hosts", metavar="HOST,...",
                   help="Host header values the MCP transport accepts beside the loopback names")
    p.add_argument("--dashboard-url", metavar="URL",
                   help="the dashboard's URL: responses carry traceUrl (default: $SEARCHTRACE_DASHBOARD_URL)")
    p.add_argument("--batch-window-ms", type=float, metavar="MS",
                   help="wait this long to batch query embeddings when the model is free (default 0)")
    add_retriever_arguments(p)
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    """Resolve the settings (refusing an unsafe bind before loading anything), open, serve until stopped."""
    serve = ServeConfig.resolve(host=args.host, port=args.port, timeout_s=args.timeout,
                                max_inflight=args.max_inflight, cors_origins=args.cors_origins,
                                dashboard_url=args.dashboard_url, batch_window_ms=args.batch_window_ms,
                                allowed_hosts=args.allowed_hosts)
    # Before torch loads: OpenMP threads that spin after each model call (the default) take the
    # cores the other searches need once the model runs in the batcher's own thread.
    os.environ.setdefault(env_names.OMP_WAIT_POLICY, "PASSIVE")
    missing = [d for d in args.datasets if not Path(d).is_dir()]
    if missing:
        print(f"error: not a dataset folder: {', '.join(missing)}", file=sys.stderr)
        return ExitCode.INVALID
    config = config_from_arguments(args)
    from searchtrace.retriever.api import open_retriever
    from searchtrace.retriever.embedding import Embedder
    from searchtrace.retriever.serve.batcher import BatchingEncoder
    from searchtrace.retriever.serve.service import Service
    from searchtrace.traces import TraceSettings, make_tracer_provider, vocabulary

    trace_settings = TraceSettings.resolve()
    provider, handles = make_tracer_provider(config.home, trace_settings)
    tracer = provider.get_tracer("searchtrace.serve")
    encoder = BatchingEncoder(Embedder(), window_ms=serve.batch_window_ms)
    progress = show_progress(args)

    def opener(path: Path, cfg: Any) -> Any:
        return open_retriever(path, cfg, embedder=encoder, progress=progress, tracer=tracer,
                              capture=trace_settings.capture, deferred=handles.deferred,
                              source=vocabulary.Source.HTTP)

    service = Service([Path(d) for d in args.datasets], config, serve, opener, tracer=tracer, store=handles.store)
    try:
        if args.mcp == "stdio":
            service.open()
            run_stdio(service)
        else:
            run_http(service)
    finally:
        service.close()
        encoder.close()
        handles.close(trace_settings.exit_timeout_s)
    return ExitCode.OK


def run_stdio(service: Any) -> None:
    """MCP over stdin/stdout until the client closes it (nothing else may write to stdout)."""
    import anyio
    from mcp.server.stdio import stdio_server

    from searchtrace.retriever.serve.mcp_tools import build_server

    server = build_server(service)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


def run_http(service: Any) -> None:
    """HTTP on the configured address until interrupted; the datasets open in the background (see /readyz)."""
    import uvicorn

    from searchtrace.retriever.serve.http import create_app

    serve: ServeConfig = service.serve
    threading.Thread(target=_open_quietly, args=(service,), name="open-datasets", daemon=True).start()
    config = uvicorn.Config(create_app(service), host=serve.host, port=serve.port, log_level="warning",
                            access_log=False, timeout_keep_alive=30, lifespan="on")
    server = uvicorn.Server(config)
    host = f"[{serve.host}]" if ":" in serve.host else serve.host
    print(f"serving http://{host}:{serve.port} (API /v1, MCP /mcp, OpenAPI /docs); "
          f"ready when /readyz says so", file=sys.stderr)
    server.run()


def _open_quietly(service: Any) -> None:
    try:
        service.open()
    except Exception:  # noqa: BLE001 - recorded by the service; /readyz reports it
        pass
