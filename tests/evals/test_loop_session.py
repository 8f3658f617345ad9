"""The MCP target's session (``LoopSession``) over a fake async client: calls from several threads at once share
one session and run beside each other, a hung call is cut off, a failed connection is the call's error and the
next call connects again, and close leaves the session."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from searchtrace.evals.runs.targets import session as session_module
from searchtrace.evals.runs.targets.session import LoopSession


class Fake:
    """Clients whose ``call_tool`` runs the step its arguments name; counts the connections opened and left."""

    def __init__(self, refuse: int = 0) -> None:
        self.opened = self.left = 0
        self.refuse = refuse  # the first connections refused
        self.entered = threading.Event()
        self.released = threading.Event()
        self.first_done: asyncio.Event | None = None

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[Any]:
        self.opened += 1
        if self.opened <= self.refuse:
            raise ConnectionRefusedError(f"connection {self.opened} refused")
        self.first_done = asyncio.Event()
        try:
            yield self
        finally:
            self.left += 1

    async def call_tool(self, name: str, arguments: dict[str, Any], read_timeout_seconds: float | None = None,
                        meta: dict[str, str] | None = None) -> Any:
        assert self.first_done is not None
        step = arguments.get("step")
        if step == "wait for the second":  # done only once a second call ran beside it
            self.entered.set()
            await self.first_done.wait()
        elif step == "second":
            self.first_done.set()
            while not self.released.is_set():  # runs on only while some thread runs the loop
                await asyncio.sleep(0.001)
        elif step == "hang":
            await asyncio.Event().wait()
        return name, arguments.get("n"), meta, read_timeout_seconds


def test_a_call_returns_the_tool_s_answer_with_its_meta_and_timeout_on_one_session():
    fake = Fake()
    session = LoopSession(fake.connect)
    try:
        answers = [session.call("search", {"n": n}, {"traceparent": "00-t-s-01"}, 5.0) for n in range(3)]
        assert answers == [("search", n, {"traceparent": "00-t-s-01"}, 5.0) for n in range(3)]
        assert session.call("search", {"n": 3}, {}, 5.0) == ("search", 3, None, 5.0)
        assert fake.opened == 1
    finally:
        session.close()
    assert fake.left == 1
    session.close()  # a second close does nothing
    assert fake.left == 1


def test_calls_from_several_threads_share_the_session_and_run_beside_each_other():
    """The first thread's call ends only once a second thread's call has run beside it; that second call goes on
    after the first thread returned, and is answered when it ends."""
    fake = Fake()
    session = LoopSession(fake.connect)
    answers: dict[str, Any] = {}

    def ask(who: str, step: str) -> None:
        try:
            answers[who] = session.call("search", {"n": who, "step": step}, {}, 5.0)
        except Exception as exc:  # the test's failure, read below
            answers[who] = exc

    try:
        session.call("search", {"n": "warm"}, {}, 5.0)
        first = threading.Thread(target=ask, args=("first", "wait for the second"))
        second = threading.Thread(target=ask, args=("second", "second"))
        first.start()
        assert fake.entered.wait(30)
        second.start()
        first.join(30)
        assert not first.is_alive() and answers["first"] == ("search", "first", None, 5.0)
        assert second.is_alive()  # its call waits for the release
        fake.released.set()
        second.join(60)
        assert answers["second"] == ("search", "second", None, 5.0)
        many = [threading.Thread(target=ask, args=(f"t{i}", "")) for i in range(8)]
        for t in many:
            t.start()
        for t in many:
            t.join(60)
        assert all(answers[f"t{i}"] == ("search", f"t{i}", None, 5.0) for i in range(8))
        assert fake.opened == 1
    finally:
        session.close()


def test_a_call_hung_past_its_guard_is_a_timeout_and_the_session_goes_on(monkeypatch):
    monkeypatch.setattr(session_module, "_GUARD_S", 0.05)
    fake = Fake()
    session = LoopSession(fake.connect)
    try:
        with pytest.raises(TimeoutError):
            session.call("search", {"step": "hang"}, {}, 0.0)
        assert session.call("search", {"n": 1}, {}, 5.0) == ("search", 1, None, 5.0)
        assert fake.opened == 1
    finally:
        session.close()


def test_a_refused_connection_is_the_call_s_error_and_the_next_call_connects_again():
    fake = Fake(refuse=1)
    session = LoopSession(fake.connect)
    try:
        with pytest.raises(ConnectionRefusedError, match="connection 1 refused"):
            session.call("search", {"n": 1}, {}, 5.0)
        assert session.call("search", {"n": 2}, {}, 5.0) == ("search", 2, None, 5.0)
        session.reset()  # a broken session dropped: left, and the next call opens a new one
        assert fake.left == 1
        assert session.call("search", {"n": 3}, {}, 5.0) == ("search", 3, None, 5.0)
        assert fake.opened == 3
    finally:
        session.close()
    assert fake.left == 2
