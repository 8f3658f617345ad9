"""``searchtrace collect``: the OTLP receiver alone, writing what any instrumented program sends to the store.

No dataset, no model: it imports the web server, the OpenTelemetry SDK and the OTLP messages, nothing of the
retriever, so it starts in about a second. Loopback by default; any other address needs
``$SEARCHTRACE_API_KEY``, which every request then carries (``searchtrace.guards``, as ``serve``). It prints
where it listens and where it stores, and a plain line of totals every few seconds while spans arrive.
Ctrl-C or SIGTERM: it stops taking requests, writes what it acknowledged-pending, and exits 0.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import threading
from typing import Any

from searchtrace import environment as env_names
from searchtrace.database import add_store_argument, resolve_store_url
from searchtrace.envvalues import text
from searchtrace.errors import ConfigError, ExitCode
from searchtrace.guards import exposure_problem
from searchtrace.home import Home, add_home_argument

__all__ = ["cmd_collect", "register"]

DEFAULT_PORT = 4318
"""OTLP/HTTP's registered port."""


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``collect`` to a CLI's subparsers."""
    p = subparsers.add_parser(
        "collect", help="receive OTLP/HTTP traces from any program and store them",
        description="Receive traces over OTLP/HTTP (POST /v1/traces, protobuf or JSON, gzip or deflate) from "
                    "any OpenTelemetry exporter and store every span: in the home's traces.sqlite, or the shared "
                    "store (--store, $SEARCHTRACE_STORE). Loopback by default; another --host needs "
                    f"${env_names.SEARCHTRACE_API_KEY}.")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free)")
    p.add_argument("--host", default="127.0.0.1",
                   help=f"address to bind (default 127.0.0.1; any other needs {env_names.SEARCHTRACE_API_KEY})")
    p.add_argument("--allowed-hosts", metavar="HOST,...",
                   help="Host names a request may use beside the loopback names and --host (a proxy's name)")
    p.add_argument("--grpc-port", type=int, metavar="PORT",
                   help="also receive OTLP over gRPC on this port (4317 by convention; needs grpcio)")
    p.add_argument("--doc-id-key", type=_id_key, action="append", default=[], metavar="[SERVICE=]KEY",
                   help="the key of document.metadata holding a document's id when a span sends no document.id "
                        "(LangChain's send none): SERVICE's (its service.name), or every service's without one "
                        "of its own; kept in the store's settings (as `traces id-key`); repeatable "
                        "(default: the keys the store keeps)")
    p.add_argument("--every", type=float, default=5.0, metavar="S",
                   help="seconds between lines of totals while spans arrive (default 5; 0: none)")
    add_home_argument(p)
    add_store_argument(p)
    p.set_defaults(func=cmd_collect)
    return p


def cmd_collect(args: argparse.Namespace) -> int:
    """Serve ``POST /v1/traces`` until Ctrl-C or SIGTERM; 0 when every acknowledged span was written."""
    for flag, port in (("--port", args.port), ("--grpc-port", args.grpc_port)):
        if port is not None and not 0 <= port <= 65535:
            raise ConfigError(f"{flag} must be between 0 and 65535, got {port}", field=flag)
    api_key = text(os.environ, env_names.SEARCHTRACE_API_KEY)
    if problem := exposure_problem(args.host, api_key):
        raise ConfigError(f"--host: {problem}", field="--host")
    import uvicorn

    from searchtrace.traces.receive.app import collector_app, receiver_for_store
    from searchtrace.traces.store.opening import open_trace_store
    from searchtrace.traces.store.searches import ANY_SERVICE

    home = Home.resolve(args.home)
    store = open_trace_store(home.traces, resolve_store_url(args.store)).open()
    for service, key in args.doc_id_key:
        n = store.set_doc_id_key(service or ANY_SERVICE, key)
        print(f"document ids of {repr(service) if service else 'every service'} without "
              f"document.id: metadata key {key!r} ({n} stored searches read again)", file=sys.stderr, flush=True)
    receiver = receiver_for_store(store, home)
    if recovered := receiver.writer.recover():
        print(f"{recovered} spans a collect or serve of this home held for {store.location} when it stopped "
              "are held again, written when the store answers", file=sys.stderr, flush=True)
    sock = _bind(args.host, args.port)
    app = collector_app(receiver, args.host, api_key=api_key, allowed_hosts=args.allowed_hosts)
    grpc_server, grpc_line = _start_grpc(receiver, args, api_key)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"collecting OTLP/HTTP on http://{shown}:{sock.getsockname()[1]}/v1/traces{grpc_line}; storing in "
          f"{store.location}", file=sys.stderr, flush=True)
    stop = threading.Event()
    if args.every > 0:
        threading.Thread(target=_report, args=(receiver, args.every, stop), daemon=True).start()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                                           timeout_keep_alive=30))
    # uvicorn stops gracefully on SIGINT and SIGTERM (the lifespan's end writes what is pending), then raises
    # the signal again: exit 0 through our own handler instead of the default one's kill or KeyboardInterrupt
    signal.signal(signal.SIGTERM, _exit_quietly)
    signal.signal(signal.SIGINT, _exit_quietly)
    try:
        server.run(sockets=[sock])
    except SystemExit:
        pass
    finally:
        stop.set()
        if grpc_server is not None:  # calls under way finish; later ones hear UNAVAILABLE and retry
            grpc_server.stop(grace=5).wait(10)
        receiver.writer.close()  # already closed by the lifespan; a no-op then
        store.close()
    print(receiver.tally.totals().line(), file=sys.stderr, flush=True)
    return ExitCode.OK


def _id_key(text: str) -> tuple[str | None, str]:
    """``[SERVICE=]KEY`` as (service, key); no service (None): every service without a key of its own."""
    service, _, key = text.rpartition("=")
    if not key.strip() or (_ and not service.strip()):
        raise argparse.ArgumentTypeError(f"{text!r}: give KEY or SERVICE=KEY, neither empty")
    return (service.strip() if _ else None), key.strip()


def _start_grpc(receiver: Any, args: argparse.Namespace, api_key: str | None) -> tuple[Any, str]:
    """The gRPC server when ``--grpc-port`` asks for one, and the words saying where it listens."""
    if args.grpc_port is None:
        return None, ""
    from searchtrace.traces.receive.grpc_service import grpc_available, start_grpc

    if not grpc_available():
        raise ConfigError("--grpc-port needs grpcio: pip install grpcio opentelemetry-exporter-otlp-proto-grpc",
                          field="--grpc-port")
    try:
        server, port = start_grpc(receiver, args.host, args.grpc_port, api_key)
    except (OSError, RuntimeError) as exc:
        raise ConfigError(f"cannot listen on {args.host}:{args.grpc_port} for gRPC: {exc}",
                          field="--grpc-port") from None
    return server, f" and gRPC on {args.host}:{port}"


def _bind(host: str, port: int) -> socket.socket:
    """The listening address, bound here so port 0 announces the real one and a busy port is one line."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}", field="--port") from None
    return sock


def _report(receiver: Any, every: float, stop: threading.Event) -> None:
    """A line of totals every ``every`` seconds, only when they changed."""
    from searchtrace.traces.receive.limits import Totals

    last = Totals()
    while not stop.wait(every):
        totals = receiver.tally.totals()
        if totals != last:
            print(totals.line(), file=sys.stderr, flush=True)
            last = totals


def _exit_quietly(signum: int, frame: Any) -> None:
    raise SystemExit(0)
