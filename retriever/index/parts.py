"""A passage's parts: its title and its sentences, embedded one by one for the ``parts`` multivector.

MiniLM reads at most 256 word pieces and averages a long abstract into one
vector, so a query that matches one sentence of it (a SciFact claim and the
abstract's conclusion, a MuSiQue hop and one fact of a Wikipedia passage) scores
lower than it should. The index therefore also embeds each part, and the dense
score of a passage averages its own cosine with its best part's (MaxSim over the
parts; see ``retriever.stages.dense`` and BENCHMARKS.md).

The sentence splitter is deliberately simple: a break after ``.``, ``!`` or
``?`` followed by whitespace and a capital, a digit or an opening bracket.
Fragments of 20 characters or fewer ("Methods.", "et al.") are dropped.
"""

from __future__ import annotations

import re

_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")
MIN_SENTENCE_CHARS = 21


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` longer than 20 characters, in order."""
    return [s for s in (p.strip() for p in _SENTENCE_BREAK.split(text)) if len(s) >= MIN_SENTENCE_CHARS]


def passage_parts(title: str, text: str, max_parts: int) -> list[str]:
    """The title (when there is one) then the sentences, at most ``max_parts``."""
    head = [title.strip()] if title.strip() else []
    return (head + sentences(text))[:max_parts]
