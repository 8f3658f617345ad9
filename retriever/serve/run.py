"""``searchtrace serve``: flags, and running the service over HTTP (uvicorn) or MCP over stdio."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from searchtrace import environment as env_names
from searchtrace.database import add_store_argument
from searchtrace.errors import ExitCode
from searchtrace.retriever.config.flags import add_retriever_arguments, config_from_arguments, show_progress
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
                   help="Host names every route accepts beside the loopback names and the bound address")
    p.add_argument("--dashboard-url", metavar="URL",
                   help="the dashboard's URL: responses carry traceUrl (default: $SEARCHTRACE_DASHBOARD_URL)")
    p.add_argument("--batch-window-ms", type=float, metavar="MS",
                   help="wait this long to batch query embeddings when the model is free (default 0)")
    p.add_argument("--workers", type=_workers, default=1, metavar="N",
                   help="server processes sharing the port, each with its own index readers and model "
                        "(Linux; 'auto' = one per core; default 1: one process, its memory once)")
    p.add_argument("--dialect", action="append", metavar="NAME",
                   help="also speak another system's API beside ours (repeatable): "
                        "hawki, huginn, proxysql, singlestore-kag, concept-rag (this one over --mcp stdio "
                        "too; README: another system's dialect)")
    p.add_argument("--model-threads", type=int, metavar="N",
                   help="threads of each worker's embedding model (default: cores / workers, at least 1; "
                        "more cut one query's latency, fewer save CPU under load)")
    add_retriever_arguments(p)
    add_store_argument(p)  # where the served traffic's traces go
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    """Resolve the settings (refusing an unsafe bind before loading anything), open, serve until stopped."""
    from searchtrace.retriever.serve.dialects import STDIO, check_dialects
    from searchtrace.retriever.serve.workers import check_supported, run_workers

    dialects = tuple(check_dialects(args.dialect or ()))
    http_only = [d for d in dialects if d not in STDIO]
    if http_only and args.mcp == "stdio":
        print(f"error: --dialect {http_only[0]}: served over HTTP only (its routes and MCP endpoints); leave out "
              f"--mcp stdio (over stdio: {', '.join(sorted(STDIO))})", file=sys.stderr)
        return ExitCode.INVALID
    serve = ServeConfig.resolve(dialects=dialects, host=args.host, port=args.port, timeout_s=args.timeout,
                                max_inflight=args.max_inflight, cors_origins=args.cors_origins,
                                dashboard_url=args.dashboard_url, batch_window_ms=args.batch_window_ms,
                                allowed_hosts=args.allowed_hosts, workers=args.workers)
    if args.mcp == "stdio" and serve.workers > 1:
        print("error: --workers: MCP over stdio is one process (one client's pipe); leave --workers out",
              file=sys.stderr)
        return ExitCode.INVALID
    check_supported(serve.workers)
    if args.model_threads is not None and args.model_threads < 1:
        print(f"error: --model-threads must be 1 or more, got {args.model_threads}", file=sys.stderr)
        return ExitCode.INVALID
    # Before the model loads (children inherit it): OpenMP threads that spin after each model
    # call (the default) take the cores the other searches need.
    os.environ.setdefault(env_names.OMP_WAIT_POLICY, "PASSIVE")
    missing = [d for d in args.datasets if not Path(d).is_dir()]
    if missing:
        print(f"error: not a dataset folder: {', '.join(missing)}", file=sys.stderr)
        return ExitCode.INVALID
    if serve.workers == 1:
        return serve_process(args, serve)
    config_from_arguments(args)  # a bad flag fails here, once, not in every worker
    return run_workers(serve.workers, serve.host, serve.port, serve_worker, (args, serve),
                       lambda port: _announce(serve, port, f"{serve.workers} workers"))


def serve_process(args: argparse.Namespace, serve: ServeConfig, *, sockets: list[Any] | None = None,
                  row: Any = None) -> int:
    """Open the datasets and serve them in this process (HTTP, or MCP over stdio) until stopped."""
    config = config_from_arguments(args)
    from searchtrace.retriever.api import open_retriever
    from searchtrace.retriever.embedding.cache import Embedder
    from searchtrace.retriever.serve.batcher import BatchingEncoder
    from searchtrace.retriever.serve.service import Service
    from searchtrace.retriever.serve.workers import cores
    from searchtrace.traces import TraceSettings, make_tracer_provider, vocabulary

    trace_settings = TraceSettings.resolve(store_url=args.store)
    provider, handles = make_tracer_provider(config.home, trace_settings)
    if warning := handles.check_store():
        print(warning, file=sys.stderr)
    tracer = provider.get_tracer("searchtrace.serve")
    # N workers on C cores: C // N model threads each, so N concurrent model calls fill the cores
    # without oversubscribing them (None: ONNX Runtime's default, every core). More threads cut one
    # lone query's latency (BENCHMARKS.md, serving, Run 4).
    threads = args.model_threads or (max(1, cores() // serve.workers) if serve.workers > 1 else None)
    encoder = BatchingEncoder(Embedder(config.home, config.precision, threads=threads),
                              window_ms=serve.batch_window_ms)
    progress = show_progress(args) and row is None

    def opener(path: Path, cfg: Any) -> Any:
        return open_retriever(path, cfg, embedder=encoder, progress=progress, tracer=tracer,
                              capture=trace_settings.capture, deferred=handles.deferred,
                              source=vocabulary.Source.HTTP)

    from searchtrace.traces import StoreCommits

    commits = StoreCommits(handles.flush_store) if handles.store is not None and serve.trace_ack else None
    service = Service([Path(d) for d in args.datasets], config, serve, opener, tracer=tracer, store=handles.store,
                      commits=commits, worker=row, trace_export=handles.store_status)
    try:
        if args.mcp == "stdio":
            service.open()
            run_stdio(service)
        else:
            run_http(service, sockets)
    finally:
        service.close()
        encoder.close()
        if commits is not None:
            commits.close()
        handles.close(trace_settings.exit_timeout_s)
    return ExitCode.OK


def serve_worker(args: argparse.Namespace, serve: ServeConfig, row: Any, port: int) -> None:
    """One of ``--workers N`` processes: listen on the shared port and serve until SIGTERM."""
    from searchtrace.notices import report_fatal_signals
    from searchtrace.retriever.serve.workers import bind

    report_fatal_signals()  # a spawned worker starts without the command line's setup
    try:
        serve_process(args, serve, sockets=[bind(serve.host, port, shared=True)], row=row)
    except KeyboardInterrupt:  # Ctrl-C reaches every worker; each stops gracefully
        pass


def run_stdio(service: Any) -> None:
    """MCP over stdin/stdout until the client closes it (nothing else may write to stdout); the served
    dialects' tools (``serve.dialects``, each of ``dialects.STDIO``) beside ours."""
    import anyio
    from mcp.server.stdio import stdio_server

    from searchtrace.retriever.serve.dialects import StdioDialects, stdio_speakers
    from searchtrace.retriever.serve.mcp_tools import build_server
    from searchtrace.retriever.serve.sessions import new_session_id

    dialects = StdioDialects(tuple(stdio_speakers(service, service.serve.dialects)))  # dialects.STDIO's
    server = build_server(service, stdio_session=new_session_id(), more=dialects)  # one pipe: one session

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


def run_http(service: Any, sockets: list[Any] | None = None) -> None:
    """HTTP until SIGINT or SIGTERM; the datasets open in the background (see /readyz).

    Args:
        service: what to serve.
        sockets: listen on these (a worker's share of the port); None: bind the configured address.
    """
    import uvicorn

    from searchtrace.retriever.serve.http import create_app
    from searchtrace.retriever.serve.workers import bind

    serve: ServeConfig = service.serve
    if sockets is None:  # bound here, not by uvicorn: a busy port is one line, port 0 announces the real one
        sockets = [bind(serve.host, serve.port)]
        _announce(serve, sockets[0].getsockname()[1], "")
    threading.Thread(target=_open_quietly, args=(service,), name="open-datasets", daemon=True).start()
    config = uvicorn.Config(create_app(service, dialects=serve.dialects), host=serve.host, port=serve.port, log_level="warning",
                            access_log=False, timeout_keep_alive=30, lifespan="on")
    server = uvicorn.Server(config)
    # uvicorn stops gracefully on SIGTERM, then raises it again; by default that kills the process
    # before the caller closes the indexes and flushes the last traces: exit 0 through them instead.
    signal.signal(signal.SIGTERM, _exit_quietly)
    server.run(sockets=sockets)


def _exit_quietly(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def _announce(serve: ServeConfig, port: int, how: str) -> None:
    host = f"[{serve.host}]" if ":" in serve.host else serve.host
    dialects = f"; dialects: {', '.join(serve.dialects)}" if serve.dialects else ""
    print(f"serving http://{host}:{port}{f' ({how})' if how else ''} (API /v1, MCP /mcp, OpenAPI /docs{dialects}); "
          f"ready when /readyz says so", file=sys.stderr)


def _workers(value: str) -> int:
    """``--workers``: a count >= 1, or ``auto`` (one per core)."""
    from searchtrace.retriever.serve.workers import cores

    if value.strip().lower() == "auto":
        return cores()
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number or 'auto', got {value!r}") from None


def _open_quietly(service: Any) -> None:
    try:
        service.open()
    except Exception:  # noqa: BLE001 - recorded by the service; /readyz reports it
        pass
