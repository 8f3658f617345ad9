"""The receiver standing alone (``searchtrace collect``): ``POST /v1/traces`` and ``GET /healthz``, behind the
guards ``serve`` and the dashboard keep (Host and Origin checked; the API key when one is set, required off
loopback), with a lifespan that writes every acknowledged-pending span before the process ends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from searchtrace.guards import ASGIApp, BearerAuth, HostCheck, own_names
from searchtrace.home import Home
from searchtrace.traces.receive.limits import ReceiveLimits, Tally
from searchtrace.traces.receive.route import TRACES_PATH, OtlpReceiver
from searchtrace.traces.receive.writer import GroupWriter, store_exporter
from searchtrace.traces.store.protocol import TraceStoreProtocol

__all__ = ["OPEN_PATHS", "collector_app", "receiver_for_store"]

OPEN_PATHS = frozenset({"/healthz"})
"""Answered without the API key and whatever the Host (a load balancer's probe)."""


def receiver_for_store(store: TraceStoreProtocol, home: Home | None = None,
                       limits: ReceiveLimits | None = None, *, close_store: bool = True) -> OtlpReceiver:
    """A receiver writing to ``store`` through its own group-commit writer (closed with ``receiver.writer``,
    which closes the store too unless ``close_store`` is False: a server that keeps using it)."""
    limits = limits or ReceiveLimits()
    writer = GroupWriter(store_exporter(store, home), limits.queue_spans, owns_exporter=close_store)
    return OtlpReceiver(writer, limits, Tally())


def collector_app(receiver: OtlpReceiver, host: str, *, api_key: str | None = None,
                  allowed_hosts: str | None = None, drain_s: float = 30.0) -> ASGIApp:
    """The ASGI app of ``collect``; its lifespan's end closes the writer (what was taken is written)."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def healthz(request: Any) -> JSONResponse:
        writer = receiver.writer
        return JSONResponse({"status": "ok", "pending": writer.pending, "held": writer.held})

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        try:
            yield
        finally:
            receiver.writer.close(drain_s)

    inner = Starlette(routes=[Route(TRACES_PATH, receiver), Route("/healthz", healthz)], lifespan=lifespan)
    app: ASGIApp = inner
    if api_key:
        app = BearerAuth(app, api_key, open_paths=OPEN_PATHS)
    return HostCheck(app, own_names(host, allowed_hosts), open_paths=OPEN_PATHS, origins_flag=None)
