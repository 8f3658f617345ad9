"""Progress of long work: a bar on a terminal, else a plain line at least every few seconds.

A CI log or a redirected stderr shows nothing of a bar (or a wall of carriage
returns); there :class:`ProgressLines` prints ``embedding: 4,096/20,000 texts
(20%), 62 s, about 4 min left`` at most every ``every_s`` seconds ($SEARCHTRACE_PROGRESS_SECONDS,
default 10), and a last line when the work took longer than that.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, Protocol, TextIO

from searchtrace.environment import SEARCHTRACE_PROGRESS_SECONDS
from searchtrace.envvalues import number
from searchtrace.errors import ConfigError

__all__ = ["DEFAULT_EVERY_S", "Progress", "ProgressLines", "duration", "progress"]

DEFAULT_EVERY_S = 10.0
"""Seconds between two progress lines when stderr is not a terminal."""


class Progress(Protocol):
    """What long work reports to: a tqdm bar or :class:`ProgressLines`."""

    def update(self, n: int = 1) -> Any: ...

    def close(self) -> None: ...


class ProgressLines:
    """Plain progress lines, at most one per ``every_s`` seconds.

    Args:
        total: units of work (0 when unknown).
        desc, unit: what is done, and its unit (``"eval"``, ``"query"``).
        initial: units already done (a resumed run).
        every_s: seconds between lines.
        stream: where lines go (default stderr).
        clock: seconds, monotonic (for tests).
    """

    def __init__(self, total: int, desc: str, unit: str, *, initial: int = 0, every_s: float = DEFAULT_EVERY_S,
                 stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.desc, self.unit, self.done, self.initial = total, desc, unit, initial, initial
        self.every_s, self.stream, self.clock = every_s, stream, clock
        self.started = self.last = clock()
        self.lines = 0

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.clock() - self.last >= self.every_s:
            self._line()

    def close(self) -> None:
        """A last line, when the work took long enough to have shown progress."""
        if self.lines or self.clock() - self.started >= self.every_s:
            self._line(final=True)

    def _line(self, final: bool = False) -> None:
        now = self.clock()
        self.last, self.lines = now, self.lines + 1
        share = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        total = f"/{self.total:,}" if self.total else ""
        units = self.unit if self.unit.endswith("s") or self.done == 1 else _plural(self.unit)
        finished = bool(self.total) and self.done >= self.total
        print(f"{self.desc}: {self.done:,}{total} {units}{share}, {now - self.started:.0f} s"
              + (", done" if final and finished else "" if finished else self._left(now - self.started)),
              file=self.stream or sys.stderr, flush=True)

    def _left(self, elapsed: float) -> str:
        """``, about 3 min left`` at the rate so far (nothing before any work is done or without a total)."""
        rate = (self.done - self.initial) / elapsed if elapsed > 0 else 0.0
        if not self.total or rate <= 0:
            return ""
        return f", about {duration((self.total - self.done) / rate)} left"

    def __enter__(self) -> ProgressLines:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def duration(seconds: float) -> str:
    """``40 s``, ``3 min``, ``1 h 20 min``: a rough time, for an estimate."""
    if seconds < 90:
        return f"{max(0, round(seconds))} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 90 else f"{minutes // 60} h {minutes % 60} min"


def _plural(unit: str) -> str:
    return unit[:-1] + "ies" if unit.endswith("y") and unit[-2:-1] not in "aeiou" else unit + "s"


def every_s(environ: Mapping[str, str] | None = None) -> float:
    """Seconds between progress lines: ``$SEARCHTRACE_PROGRESS_SECONDS`` (below 0 is 0), else :data:`DEFAULT_EVERY_S`.

    A value that is not a number is ignored: it only spaces progress lines, and this is
    read once long work has begun, which a bad value must not stop.
    """
    try:
        seconds = number(os.environ if environ is None else environ, SEARCHTRACE_PROGRESS_SECONDS)
    except ConfigError:
        return DEFAULT_EVERY_S
    return DEFAULT_EVERY_S if seconds is None else max(0.0, seconds)


def progress(total: int, desc: str, unit: str, *, bars: bool, initial: int = 0) -> Progress:
    """A tqdm bar when ``bars`` (a terminal, progress wanted), else :class:`ProgressLines`."""
    if bars:
        from tqdm.auto import tqdm

        return tqdm(total=total, initial=initial, desc=desc, unit=unit)
    return ProgressLines(total, desc, unit, initial=initial, every_s=every_s())
