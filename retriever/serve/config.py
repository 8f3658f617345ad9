"""The server's settings: one frozen object, explicit argument > environment variable > default."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from searchtrace import environment as names
from searchtrace.envvalues import flag, integer, number, pick, text
from searchtrace.errors import ConfigError
from searchtrace.guards import exposure_problem, is_loopback, own_names

__all__ = ["ServeConfig", "is_loopback"]

MAX_BODY_BYTES = 64 * 1024
"""Largest request body the HTTP API reads (and MCP over HTTP): 64 KiB."""

MAX_IDS = 100
"""Most ids one ``get_docs`` / ``get_chunks`` call may ask for."""

MAX_RESPONSE_BYTES = 5 * 1024 * 1024
"""Largest ``get_docs`` / ``get_chunks`` answer: 5 MB (a bigger one is refused, 413)."""

DEFAULT_TIMEOUT_S = 2.0
DEFAULT_MAX_INFLIGHT = 32
MAX_WORKERS = 64
RETRY_AFTER_S = 1
"""What a 429 answer's ``Retry-After`` says."""

TRACE_ACK_TIMEOUT_S = 1.0
"""Longest an answer waits for its trace to be stored (a slow or failing store: it goes out anyway)."""


@dataclass(frozen=True)
class ServeConfig:
    """How ``searchtrace serve`` listens and what it allows.

    Attributes:
        host, port: where the HTTP server binds (loopback unless told otherwise).
        api_key: the bearer token every request must carry (None: no authentication,
            allowed on a loopback address only).
        timeout_s: a search slower than this answers 504 TIMEOUT.
        max_inflight: searches running at once; one more answers 429 OVERLOADED.
        cors_origins: origins allowed from a browser (empty: no CORS headers at all).
        dashboard_url: the dashboard's base URL, for ``traceUrl`` (None: no URL).
        batch_window_ms: how long the query-embedding batcher waits for company
            once a model call is free (0: it takes whatever queued during the last call).
        allowed_hosts: Host names (beside the loopback names and the bound address) every route's
            DNS-rebinding check accepts (``searchtrace.guards.HostCheck``).
        workers: HTTP server processes sharing the port (1: this process alone).
        trace_ack: answer a request only once its trace is in the local store (``traces.commits``),
            waiting at most :data:`TRACE_ACK_TIMEOUT_S`.
        dialects: other systems' surfaces mounted beside ours (``--dialect``; ``serve.dialects``).
        proxysql_token: the Bearer token of ProxySQL's tools (``--dialect proxysql``).
    """

    host: str = "127.0.0.1"
    port: int = 8765
    api_key: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_inflight: int = DEFAULT_MAX_INFLIGHT
    cors_origins: tuple[str, ...] = ()
    dashboard_url: str | None = None
    batch_window_ms: float = 0.0
    allowed_hosts: tuple[str, ...] = ()
    workers: int = 1
    trace_ack: bool = True
    dialects: tuple[str, ...] = ()
    proxysql_token: str | None = None

    def __post_init__(self) -> None:
        problems = []
        if not 0 < self.timeout_s <= 600:
            problems.append(f"timeout must be a number of seconds in (0, 600], got {self.timeout_s!r}")
        if not 1 <= self.max_inflight <= 1024:
            problems.append(f"max in-flight searches must be 1-1024, got {self.max_inflight!r}")
        if not 0 <= self.port <= 65535:
            problems.append(f"port must be 0-65535, got {self.port!r}")
        if not 1 <= self.workers <= MAX_WORKERS:
            problems.append(f"workers must be 1-{MAX_WORKERS}, got {self.workers!r}")
        if not 0 <= self.batch_window_ms <= 100:
            problems.append(f"batch window must be 0-100 ms, got {self.batch_window_ms!r}")
        if exposed := exposure_problem(self.host, self.api_key):
            problems.append(exposed)
        if "proxysql" in self.dialects and not self.proxysql_token:
            problems.append(f"--dialect proxysql: its tools need a Bearer token; set {names.SEARCHTRACE_PROXYSQL_TOKEN}")
        if problems:
            raise ConfigError("; ".join(problems), field="serve")

    @classmethod
    def resolve(cls, *, host: str | None = None, port: int | None = None, timeout_s: float | None = None,
                max_inflight: int | None = None, cors_origins: str | None = None, dashboard_url: str | None = None,
                batch_window_ms: float | None = None, allowed_hosts: str | None = None, workers: int | None = None,
                dialects: tuple[str, ...] = (), environ: Mapping[str, str] | None = None) -> ServeConfig:
        """Explicit argument > environment variable > default. Raises ConfigError naming the setting."""
        env = os.environ if environ is None else environ
        origins = cors_origins if cors_origins is not None else text(env, names.SEARCHTRACE_CORS_ORIGINS) or ""
        if timeout_s is None:  # a variable is read only when no argument overrides it
            timeout_s = pick(None, number(env, names.SEARCHTRACE_SERVE_TIMEOUT), DEFAULT_TIMEOUT_S)
        if max_inflight is None:
            max_inflight = pick(None, integer(env, names.SEARCHTRACE_SERVE_MAX_INFLIGHT, minimum=1),
                                DEFAULT_MAX_INFLIGHT)
        return cls(
            host=host or "127.0.0.1",
            port=8765 if port is None else port,
            api_key=text(env, names.SEARCHTRACE_API_KEY),
            timeout_s=timeout_s,
            max_inflight=max_inflight,
            cors_origins=tuple(o.strip() for o in origins.split(",") if o.strip()),
            dashboard_url=dashboard_url or text(env, names.SEARCHTRACE_DASHBOARD_URL),
            batch_window_ms=0.0 if batch_window_ms is None else batch_window_ms,
            allowed_hosts=own_names(host, allowed_hosts),
            workers=1 if workers is None else workers,
            trace_ack=pick(None, flag(env, names.SEARCHTRACE_TRACE_ACK), True),
            dialects=dialects,
            proxysql_token=text(env, names.SEARCHTRACE_PROXYSQL_TOKEN) if "proxysql" in dialects else None,
        )

    def trace_url(self, trace_id: str) -> str | None:
        """The dashboard's Traces page opened on one trace, when a dashboard URL is set."""
        if not self.dashboard_url or not trace_id:
            return None
        return f"{self.dashboard_url.rstrip('/')}/traces?trace={trace_id}"
