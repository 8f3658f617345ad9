"""The README's fenced code blocks, with where they sit, and their shell blocks split into commands.

Read by ``tests/system/test_readme.py``, which runs each block as its manifest says; a path argument
lets a test point it at a modified copy of the README.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
SHELLS = frozenset({"bash", "sh", "shell", "console", "zsh"})
_FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)\s*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced block: its language tag, the text between the fences, the line of its opening fence
    (1-based) and the nearest heading above it (``""`` before the first)."""

    language: str
    text: str
    line: int
    heading: str

    @property
    def is_shell(self) -> bool:
        return self.language in SHELLS

    @property
    def commands(self) -> list[str]:
        """Its commands (shell blocks only): ``\\`` continuations joined, comment lines, blank lines
        and ``$ `` prompts dropped; a command's trailing comment is kept (the shell ignores it)."""
        return split_commands(self.text) if self.is_shell else []

    @property
    def key(self) -> str:
        """A stable identifier: the heading and the start of the block's first command (else of its first
        line), its trailing comment left out."""
        first = next(iter(self.commands), None) or next(
            (line.strip() for line in self.text.splitlines() if line.strip()), "")
        return f"{self.heading} | {first.split(' # ')[0].strip()[:72].rstrip()}"


def split_commands(text: str) -> list[str]:
    """Shell text as the commands a user would type, one string each."""
    commands: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if not pending:
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            if stripped.startswith("$ "):
                line = stripped[2:]
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        commands.append((pending + line.strip()).strip())
        pending = ""
    if pending:
        raise ValueError(f"a command ends in a continuation '\\' with nothing after it: {pending.strip()!r}")
    return commands


def read_blocks(path: Path = README) -> list[Block]:
    """Every fenced block of the Markdown file at ``path``, in order; an unclosed fence is an error naming its line."""
    blocks: list[Block] = []
    heading = ""
    fence: tuple[str, str, int] | None = None
    body: list[str] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if fence is None:
            opened = _FENCE.match(line)
            if opened:
                fence, body = (opened.group(1), opened.group(2).lower(), number), []
            elif match := _HEADING.match(line):
                heading = match.group(2)
        elif line.strip() == fence[0]:
            blocks.append(Block(fence[1], "\n".join(body) + "\n", fence[2], heading))
            fence = None
        else:
            body.append(line)
    if fence is not None:
        raise ValueError(f"{path}:{fence[2]}: a ``` fence that is never closed")
    return blocks
