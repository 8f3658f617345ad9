"""An eval target as a real client: bounded concurrency and retries with backoff, around any search function.

A search function (``SearchFn``: a request dict in, a response dict out, errors raised
by the error seam of :mod:`searchtrace.errors`) is whatever a target's transport is:
our HTTP contract, a Python function, or another transport. :class:`RetryingSearch`
wraps one so that a passing fault does not score as a bad retriever: an
:class:`~searchtrace.errors.Overloaded` answer (429, 503) is asked again after the
``Retry-After`` it named (capped), a :class:`~searchtrace.errors.SearchTimeout` or a
:class:`~searchtrace.errors.BackendUnavailable` after an exponential backoff with jitter
(AWS's "equal jitter": half the backoff fixed, half random, so retries spread out and
still wait); a :class:`~searchtrace.errors.SearchFailed` or a validation error is the
target's answer and is never asked again. Each retry is an event on the search's span.
What is left failing after the last attempt is the query's error, recorded as such.

:func:`map_bounded` runs a batch's searches with at most ``concurrency`` in flight, on
threads (a search function is synchronous), answers in the batch's order.
:func:`stream_bounded` keeps ``concurrency`` in flight over a whole run: each thread takes
the next search as soon as its last one is answered, so a slow query holds back only
its own thread, and the answers come as they finish.
"""

from __future__ import annotations

import queue
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from opentelemetry import trace

from searchtrace.errors import BackendUnavailable, Overloaded, SearchTimeout, ValidationError
from searchtrace.traces import vocabulary as v

__all__ = ["MAX_CONCURRENCY", "MAX_RETRIES", "OVERLOADED_STATUSES", "ClientPolicy", "RetryingSearch", "map_bounded",
           "retry_after_seconds", "stream_bounded"]

MAX_CONCURRENCY = 64
"""The most searches ``--concurrency`` may keep in flight."""

MAX_RETRIES = 10
"""The most retries ``--retries`` may ask for a query (attempts are one more)."""

RETRYABLE = (Overloaded, SearchTimeout, BackendUnavailable)
"""The errors a target may answer differently when asked again; any other is its answer."""

OVERLOADED_STATUSES = (429, 503)
"""HTTP statuses that say "ask again later": raised as :class:`Overloaded`, with the ``Retry-After`` they name."""


def retry_after_seconds(value: str | None) -> float | None:
    """An HTTP ``Retry-After`` in seconds: a number of seconds, or a date (the seconds until it); None when
    absent or unreadable."""
    if value is None:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        from datetime import UTC, datetime
        from email.utils import parsedate_to_datetime

        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        seconds = (when - datetime.now(UTC)).total_seconds() if when.tzinfo else 0.0
    return max(seconds, 0.0) if seconds == seconds and seconds != float("inf") else None


T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class ClientPolicy:
    """How an eval asks a target.

    Attributes:
        concurrency: searches in flight at once (1-64).
        timeout_s: each request's time limit, in seconds (> 0; the transport enforces it); None: the target
            file's own ``timeout_s``, else 60.
        retries: times a query is asked again after a retryable error (0-10).
        backoff_s: the first retry's backoff; each next one doubles it.
        backoff_cap_s: the longest backoff.
        retry_after_cap_s: the longest ``Retry-After`` honoured (a server asking for an hour gets this).
    """

    concurrency: int = 1
    timeout_s: float | None = None
    retries: int = 3
    backoff_s: float = 0.5
    backoff_cap_s: float = 30.0
    retry_after_cap_s: float = 60.0

    def __post_init__(self) -> None:
        if not 1 <= self.concurrency <= MAX_CONCURRENCY:
            raise ValidationError(f"--concurrency must be 1-{MAX_CONCURRENCY}, got {self.concurrency}",
                                  field="concurrency")
        if not 0 <= self.retries <= MAX_RETRIES:
            raise ValidationError(f"--retries must be 0-{MAX_RETRIES}, got {self.retries}", field="retries")
        if self.timeout_s is not None and (not self.timeout_s > 0 or self.timeout_s != self.timeout_s):
            raise ValidationError(f"--target-timeout must be a number of seconds > 0, got {self.timeout_s}",
                                  field="target_timeout")

    def delay(self, retry: int, error: Exception, rand: float) -> float:
        """Seconds to wait before retry number ``retry`` (1-based) after ``error``; ``rand`` in [0, 1).

        An ``Overloaded`` that named its ``Retry-After`` waits that long (capped); anything else
        backs off ``backoff_s * 2 ** (retry - 1)`` (capped), half of it fixed and half jittered.
        """
        asked = getattr(error, "retry_after_s", None)
        if isinstance(error, Overloaded) and asked is not None:
            return min(max(float(asked), 0.0), self.retry_after_cap_s)
        backoff = min(self.backoff_s * 2 ** (retry - 1), self.backoff_cap_s)
        return backoff / 2 + rand * backoff / 2


class RetryingSearch:
    """A search function asked again on retryable errors, per its :class:`ClientPolicy`.

    Args:
        search: the target's search function.
        policy: attempts and waits.
        sleep: how to wait (injected by tests, which assert the waits asked for, never the clock).
        rand: the jitter's source of numbers in [0, 1).
    """

    def __init__(self, search: Callable[[dict[str, Any]], Mapping[str, Any]], policy: ClientPolicy, *,
                 sleep: Callable[[float], object] = time.sleep, rand: Callable[[], float] = random.random) -> None:
        self.search, self.policy, self.sleep, self.rand = search, policy, sleep, rand

    def __getattr__(self, name: str) -> Any:
        """What else the wrapped search offers (its ``max_top_k``, its ``close``) is this one's too."""
        if name == "search":  # not set yet (a copy made without __init__): no recursion
            raise AttributeError(name)
        return getattr(self.search, name)

    def __call__(self, request: dict[str, Any]) -> Mapping[str, Any]:
        retry = 0
        while True:
            try:
                return self.search(request)
            except RETRYABLE as exc:
                if retry >= self.policy.retries:
                    raise
                retry += 1
                wait = self.policy.delay(retry, exc, self.rand())
                trace.get_current_span().add_event(v.TARGET_RETRY_EVENT, {
                    v.TARGET_RETRY_ATTEMPT: retry, v.ERROR_CODE: exc.code.value, v.TARGET_RETRY_DELAY_S: wait})
                self.sleep(wait)


def map_bounded(fn: Callable[[T], R], items: Sequence[T], pool: ThreadPoolExecutor | None) -> list[R]:
    """``fn`` of each item, in order: on ``pool``'s threads when given (its size bounds what is in flight),
    else one after another. An exception (a ``KeyboardInterrupt`` too) raised by ``fn`` is raised here."""
    if pool is None or len(items) < 2:
        return [fn(item) for item in items]
    return list(pool.map(fn, items))


def stream_bounded(fn: Callable[[T], R], items: Sequence[T], pool: ThreadPoolExecutor | None,
                   window: int) -> Iterator[tuple[int, R]]:
    """``(index, fn(item))`` of each item, as each finishes: ``window`` of ``pool``'s threads each take
    the next item as soon as their last one is done (a sliding window, never a wave that waits for its
    slowest), else one after another, in order.

    An exception (a ``KeyboardInterrupt`` too) raised by ``fn`` is raised here; leaving the iterator
    early stops the threads after the item each is on.
    """
    if pool is None or window < 2 or len(items) < 2:
        for i, item in enumerate(items):
            yield i, fn(item)
        return
    todo = iter(enumerate(items))
    answers: queue.SimpleQueue[tuple[int, R | None, BaseException | None]] = queue.SimpleQueue()
    lock, stop = threading.Lock(), threading.Event()

    def worker() -> None:
        while not stop.is_set():
            with lock:
                nxt = next(todo, None)
            if nxt is None:
                return
            try:
                answers.put((nxt[0], fn(nxt[1]), None))
            except BaseException as exc:  # raised in the caller's thread, where the run stops
                answers.put((nxt[0], None, exc))
                return

    for _ in range(min(window, len(items))):
        pool.submit(worker)
    try:
        for _ in range(len(items)):
            i, result, error = answers.get()
            if error is not None:
                raise error
            yield i, cast(R, result)
    finally:
        stop.set()
