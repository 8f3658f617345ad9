"""Live traffic's latency: the searches and requests of every source but eval runs, over a time window.

Per stage and per source (http, mcp, cli, python) percentiles, requests per
minute, and the errors, 429s (overloaded) and 504s (timed out) the servers
answered. The work is bounded whatever the window: the newest
:data:`TRAFFIC_LIMIT` traces of the window are read from the ``traces`` table
(one index range), and the stage spans of the newest :data:`STAGE_SAMPLE` of
them; a window holding more says so (:attr:`Traffic.truncated`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from searchtrace.dashboard.data.tracestore import trace_store
from searchtrace.errors import ErrorCode
from searchtrace.names import Stage
from searchtrace.traces import TraceFilter
from searchtrace.traces import vocabulary as v

__all__ = ["ALL", "BY", "LIVE_SOURCES", "REQUEST", "STAGE_SAMPLE", "TRAFFIC_LIMIT", "WINDOWS", "Traffic", "since_for",
           "traffic"]

LIVE_SOURCES = tuple(s.value for s in v.Source if s is not v.Source.EVAL)
"""Who live traffic comes from: every :class:`~searchtrace.traces.spans.vocabulary.Source` but eval runs."""
TRAFFIC_LIMIT = 20_000  # traces of a window read (the newest): per source figures and requests per minute
STAGE_SAMPLE = 5_000  # of those, the newest whose stage spans are read for the per-stage percentiles
REQUEST = "request"  # the whole request: its root span (a server span when served, else the search span)
ALL = "all"  # every source together
WINDOWS = {"last 15 min": 15 * 60, "last hour": 3600, "last 24 h": 86_400, "last 7 days": 7 * 86_400, "all": None}
"""The time windows the page offers, in seconds before now (None: no lower bound)."""
STEP_S = 30  # window starts are rounded to this, so a window's figures stay cached while it barely moves
OVERLOADED, TIMED_OUT = 429, 504
PERCENTILES = (50, 95, 99)
BUCKETS_MIN = (1, 5, 15, 60, 360, 1440)  # requests per minute averaged over buckets of these many minutes
OVER_TIME_COLUMNS = ["minute", "by", "name", "percentile", "ms", "n"]
BY = ("source", "service")  # what latency over time is grouped by


@dataclass(frozen=True)
class Traffic:
    """Live traffic in a window.

    Attributes:
        requests: one row per trace, newest first: start (UTC), source, root, status (error, ok),
            status_code (HTTP), error_code, duration_ms.
        stages: per (source, stage) percentiles, ``all`` sources first: source, stage, p50, p95, p99, n.
        by_source: per source (and ``all``): requests, p50, p95, p99 of the request, errors, 429, 504.
        per_minute: requests per minute of each source, averaged over buckets: minute (bucket start),
            source, per_minute.
        bucket_min: the buckets' width in minutes.
        over_time: the request's latency percentiles in each bucket, per source and per service (another
            retriever's services included): minute (bucket start), by (``source`` or ``service``), name,
            percentile (p50, p95, p99), ms, n (requests in the bucket).
        truncated: the window held more than :data:`TRAFFIC_LIMIT` traces (figures cover the newest).
        stage_traces: how many traces the per-stage figures read.
    """

    requests: pd.DataFrame
    stages: pd.DataFrame
    by_source: pd.DataFrame
    per_minute: pd.DataFrame
    bucket_min: int
    truncated: bool
    stage_traces: int
    over_time: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=OVER_TIME_COLUMNS))


def since_for(seconds: float | None, now_s: float | None = None) -> int | None:
    """The epoch ns a window of ``seconds`` before now starts at, rounded down to :data:`STEP_S` (None: all)."""
    if seconds is None:
        return None
    now = time.time() if now_s is None else now_s
    return int((now // STEP_S) * STEP_S - seconds) * 10**9


def _requests(home: str | Path, since_ns: int | None, until_ns: int | None, limit: int) -> pd.DataFrame:
    store = trace_store(home)
    rows = store.list_traces(TraceFilter(since=since_ns, until=until_ns, sources=LIVE_SOURCES, limit=limit)) \
        if store else []
    frame = pd.DataFrame({
        "trace_id": [s.trace_id for s in rows], "start_ns": [s.start_ns for s in rows],
        "source": [s.source or "" for s in rows], "service": [s.service or "" for s in rows],
        "root": [s.root_name or "" for s in rows],
        "status": ["error" if s.status == "ERROR" else "ok" for s in rows],
        "status_code": pd.array([s.status_code for s in rows], dtype="Int64"),
        "error_code": [s.error_code or "" for s in rows], "duration_ms": [s.duration_ms for s in rows]})
    frame.insert(1, "start", pd.to_datetime(frame["start_ns"], unit="ns", utc=True))
    return frame


def _percentiles(values: np.ndarray) -> dict[str, float]:
    return {f"p{q}": float(x) for q, x in zip(PERCENTILES, np.percentile(values, PERCENTILES))} if len(values) else {
        f"p{q}": float("nan") for q in PERCENTILES}


def _by_source(requests: pd.DataFrame) -> pd.DataFrame:
    rows = []
    groups = [(ALL, requests), *((s, g) for s, g in requests.groupby("source", sort=True))] if len(requests) else []
    for source, group in groups:
        codes, errors = group["status_code"], group["error_code"]
        rows.append({"source": source, "requests": len(group), **_percentiles(group["duration_ms"].to_numpy(float)),
                     "errors": int((group["status"] == "error").sum()),
                     "429": int(((codes == OVERLOADED).fillna(False) | (errors == ErrorCode.OVERLOADED.value)).sum()),
                     "504": int(((codes == TIMED_OUT).fillna(False) | (errors == ErrorCode.TIMEOUT.value)).sum())})
    return pd.DataFrame(rows, columns=["source", "requests", *(f"p{q}" for q in PERCENTILES), "errors", "429", "504"])


def _stages(home: str | Path, requests: pd.DataFrame) -> pd.DataFrame:
    """Per (source, stage) percentiles over the newest :data:`STAGE_SAMPLE` traces; ``request`` is the root."""
    columns = ["source", "stage", *(f"p{q}" for q in PERCENTILES), "n"]
    sample = requests.head(STAGE_SAMPLE)
    store = trace_store(home)
    if store is None or sample.empty:
        return pd.DataFrame(columns=columns)
    names = [*(s.value for s in Stage), v.SEARCH_SPAN]
    spans = store.span_durations(sample["trace_id"].tolist(), names)
    stages = pd.DataFrame(spans, columns=["trace_id", "stage", "ms"]).merge(sample[["trace_id", "source"]])
    roots = sample.assign(stage=REQUEST, ms=sample["duration_ms"])[["trace_id", "stage", "ms", "source"]]
    long = pd.concat([stages, roots], ignore_index=True) if len(stages) else roots
    rows = []
    for source in [ALL, *sorted(set(long["source"]))]:
        group = long if source == ALL else long[long["source"] == source]
        by_stage = dict(list(group.groupby("stage")["ms"]))
        for stage in [*names, REQUEST]:
            if stage in by_stage:
                ms = by_stage[stage].to_numpy(float)
                rows.append({"source": source, "stage": stage, **_percentiles(ms), "n": len(ms)})
    return pd.DataFrame(rows, columns=columns)


def _span(requests: pd.DataFrame, since_ns: int | None, until_ns: int | None) -> tuple[int, int]:
    """The time the chart covers: the window (up to now when open), else from the oldest request to the newest."""
    newest = int(requests["start_ns"].max())
    lo = since_ns if since_ns is not None else int(requests["start_ns"].min())
    hi = until_ns if until_ns is not None else max(newest, time.time_ns()) if since_ns is not None else newest
    return lo, hi


def _bucket_min(lo: int, hi: int) -> int:
    minutes = max(1.0, (hi - lo) / 60e9)
    return next((b for b in BUCKETS_MIN if minutes / b <= 400), BUCKETS_MIN[-1])  # at most ~400 points a line


def _per_minute(requests: pd.DataFrame, lo: int, hi: int, bucket_min: int) -> pd.DataFrame:
    """Requests per minute of each source in each bucket from ``lo`` to ``hi``; 0 where it had none."""
    if requests.empty:
        return pd.DataFrame(columns=["minute", "source", "per_minute"])
    bucket_ns = bucket_min * 60 * 10**9
    buckets = np.arange(lo // bucket_ns, hi // bucket_ns + 1, dtype=np.int64) * bucket_ns
    counts = requests.assign(bucket=(requests["start_ns"] // bucket_ns) * bucket_ns).groupby(["bucket", "source"]).size()
    grid = pd.MultiIndex.from_product([buckets, sorted(set(requests["source"]))], names=["bucket", "source"])
    full = counts.reindex(grid, fill_value=0).rename("n").reset_index()
    return pd.DataFrame({"minute": pd.to_datetime(full["bucket"], unit="ns", utc=True), "source": full["source"],
                         "per_minute": full["n"] / bucket_min})


def _over_time(requests: pd.DataFrame, bucket_min: int) -> pd.DataFrame:
    """p50, p95 and p99 of the request's duration in each bucket of ``bucket_min`` minutes, per source and per
    service (a bucket without requests of a group has no row: no latency to say)."""
    if requests.empty:
        return pd.DataFrame(columns=OVER_TIME_COLUMNS)
    bucket_ns = bucket_min * 60 * 10**9
    timed = requests.assign(bucket=(requests["start_ns"] // bucket_ns) * bucket_ns)
    rows: list[dict[str, object]] = []
    for by in BY:
        for (bucket, name), group in timed.groupby(["bucket", by], sort=True):
            ms = group["duration_ms"].to_numpy(float)
            rows.extend({"minute": bucket, "by": by, "name": name or "(none)", "percentile": p, "ms": x, "n": len(ms)}
                        for p, x in _percentiles(ms).items())
    frame = pd.DataFrame(rows, columns=OVER_TIME_COLUMNS)
    frame["minute"] = pd.to_datetime(frame["minute"], unit="ns", utc=True)
    return frame


def traffic(home: str | Path, since_ns: int | None = None, until_ns: int | None = None,
            limit: int = TRAFFIC_LIMIT) -> Traffic:
    """Live traffic that started in ``[since_ns, until_ns)`` (epoch ns; None: unbounded), newest first."""
    requests = _requests(home, since_ns, until_ns, limit + 1)
    truncated = len(requests) > limit
    requests = requests.head(limit)
    lo, hi = _span(requests, since_ns, until_ns) if len(requests) else (0, 0)
    bucket = _bucket_min(lo, hi)
    return Traffic(requests.drop(columns=["start_ns"]), _stages(home, requests), _by_source(requests),
                   _per_minute(requests, lo, hi, bucket), bucket, truncated, min(len(requests), STAGE_SAMPLE),
                   _over_time(requests, bucket))
