"""StoreCommits: a caller waits until the spans finished before it asked are written, one write serving many."""

from __future__ import annotations

import asyncio
import threading
import time

from trace_fixtures import FakeSearch, emulate_search

from searchtrace.traces import StoreCommits, TraceSettings, make_tracer_provider
from searchtrace.traces.store.sqlite import TraceStore


def test_a_wait_returns_once_the_finished_trace_is_in_the_store(tmp_path):
    from dataclasses import replace

    from searchtrace.home import Home

    home = Home(tmp_path)
    settings = replace(TraceSettings.resolve(environ={}), schedule_delay_ms=600_000)  # the batch never comes
    provider, handles = make_tracer_provider(home, settings)
    commits = StoreCommits(handles.flush_store)
    try:
        tracer = provider.get_tracer("t")
        trace_id = emulate_search(tracer, FakeSearch(run_id="r", start_ns=10**18, candidates=5))
        store = TraceStore(home.traces)
        try:
            assert store.stored([trace_id]) == {}  # finished, not yet written
            assert commits.wait(10) is True
            assert store.stored([trace_id]) == {trace_id: 11}
        finally:
            store.close()
        assert commits.commits == 1 and commits.unstored == 0
    finally:
        commits.close()
        handles.close()


def test_callers_waiting_during_a_write_share_the_next_one():
    started, release = threading.Event(), threading.Event()
    calls = []

    def flush() -> bool:
        calls.append(time.monotonic())
        started.set()
        release.wait(10)
        return True

    commits = StoreCommits(flush)
    try:
        first = commits.request()
        assert started.wait(10)  # the first write is under way: these five wait for the next
        later = [commits.request() for _ in range(5)]
        release.set()
        assert first.result(10) is True and all(f.result(10) is True for f in later)
        assert commits.commits == 2 and len(calls) == 2
    finally:
        release.set()
        commits.close()


def test_a_failed_or_slow_write_lets_the_answer_go_and_is_counted():
    release = threading.Event()
    commits = StoreCommits(lambda: release.wait(10) and False)
    try:
        assert commits.wait(0.05) is False  # timed out: counted, not raised
        assert asyncio.run(commits.stored(0.05)) is False
        release.set()
        assert commits.wait(10) is False  # the write failed
        assert commits.unstored == 3
    finally:
        release.set()
        commits.close()


def test_a_flush_that_raises_resolves_its_waiters_false_and_the_thread_goes_on():
    results = iter([RuntimeError("boom"), True])

    def flush() -> bool:
        value = next(results)
        if isinstance(value, Exception):
            raise value
        return value

    commits = StoreCommits(flush)
    try:
        assert commits.wait(10) is False
        assert commits.wait(10) is True
    finally:
        commits.close()


def test_after_close_a_request_resolves_false_at_once():
    commits = StoreCommits(lambda: True)
    commits.close()
    assert commits.request().result(0) is False
