"""What a run index lists (:class:`RunEntry`) and how a run is asked for (:class:`RunSelector`).

A run is asked for by its id, by its name (the newest run of that name), or as
``latest:tag=NAME`` (the newest run carrying that tag). Newest means made last:
the run's creation time, then its id, so a run pushed again later never becomes
the newest by being pushed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from searchtrace.errors import ValidationError

__all__ = ["LATEST_TAG", "RunEntry", "RunSelector"]

LATEST_TAG = "latest:tag="
"""The prefix of a selector that asks for the newest run with a tag."""


@dataclass(frozen=True)
class RunEntry:
    """One run of an index, as ``runs list`` shows it.

    Attributes:
        run_id: the run's id (its folder's name).
        name: what the user calls it (None: unnamed).
        tags: its tags (``eval --tag``).
        created_at: when it was made (UTC).
        dataset: the dataset's name.
        mode: the retriever's mode (``external`` for a scored run file).
    """

    run_id: str
    name: str | None
    tags: tuple[str, ...]
    created_at: datetime
    dataset: str
    mode: str


@dataclass(frozen=True)
class RunSelector:
    """A run asked for: by ``tag`` (the newest with it), else by ``key`` (an id, else a name).

    Raises:
        ValidationError: an empty selector or tag.
    """

    key: str | None = None
    tag: str | None = None

    def __post_init__(self) -> None:
        if (self.key is None) == (self.tag is None) or not (self.key or self.tag or "").strip():
            raise ValidationError(f"a run is a run id, a name or {LATEST_TAG}NAME, got {str(self)!r}", field="run")

    @classmethod
    def parse(cls, text: str) -> RunSelector:
        """``latest:tag=main`` asks for a tag; anything else for an id or a name."""
        if text.startswith(LATEST_TAG):
            return cls(tag=text[len(LATEST_TAG):])
        return cls(key=text)

    def __str__(self) -> str:
        return f"{LATEST_TAG}{self.tag}" if self.tag is not None else str(self.key)

    def describe(self) -> str:
        """What was asked, for a message: ``no run with tag 'main'``'s subject."""
        return f"run with tag {self.tag!r}" if self.tag is not None else f"run id or name {self.key!r}"
