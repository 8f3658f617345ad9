"""Entity-name normalization and query spans for exact entity lookup.

Graph entities are keyed by ``normalize_name``; a query's entity mentions are
found by looking each of its ``candidate_spans`` up among those keys.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from searchtrace.errors import ValidationError

__all__ = ["normalize_name", "candidate_spans", "strip_article"]

ARTICLES = frozenset({"the", "a", "an"})
# Straight, typographic, modifier-letter and backtick apostrophes.
APOSTROPHES = frozenset("'\u2019\u02bc\u2018`")

# The combining-diacritics blocks: accents that NFKD splits off Latin, Greek and
# Cyrillic letters. Other marks (Indic viramas and vowel signs) spell the word
# and are kept.
_DIACRITICS = ((0x0300, 0x036F), (0x1AB0, 0x1AFF), (0x1DC0, 0x1DFF), (0x20D0, 0x20FF), (0xFE20, 0xFE2F))


def _is_diacritic(ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _DIACRITICS)


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or unicodedata.category(ch).startswith("M")


def _fold(s: str) -> str:
    """NFKD, drop accents, casefold."""
    decomposed = unicodedata.normalize("NFKD", s)
    kept = "".join(ch for ch in decomposed if not _is_diacritic(ch))
    # casefold can emit combining marks again ("İ" -> "i" + U+0307), so strip twice.
    folded = unicodedata.normalize("NFKD", kept.casefold())
    return "".join(ch for ch in folded if not _is_diacritic(ch))


def _words(s: str) -> list[str]:
    """Fold ``s`` and split it into words.

    An apostrophe inside a word is dropped (``O'Brien`` -> ``obrien``), and a
    word-final possessive ``'s`` with it (``Rogers's`` -> ``rogers``, as
    ``Beatles'`` -> ``beatles``), so "Carl Rogers's theory" contains the key
    "carl rogers". Every other non-word character, hyphens included, separates
    words (``Jean-Paul`` -> ``jean paul``).
    """
    if s.isascii():
        return _ascii_words(s.lower().replace("`", "'"))
    text = _fold(s)
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if _is_word_char(ch):
            out.append(ch)
        elif ch in APOSTROPHES and 0 < i < n - 1 and _is_word_char(text[i - 1]) and _is_word_char(text[i + 1]):
            if text[i + 1] == "s" and (i + 2 == n or not _is_word_char(text[i + 2])):
                i += 1  # skip the "s" too
        else:
            out.append(" ")
        i += 1
    return "".join(out).split()


_ASCII_POSSESSIVE = re.compile(r"(?<=[a-z0-9])'s(?![a-z0-9])")
_ASCII_INNER_APOSTROPHE = re.compile(r"(?<=[a-z0-9])'(?=[a-z0-9])")
_ASCII_NON_WORD = re.compile(r"[^a-z0-9]+")


def _ascii_words(text: str) -> list[str]:
    """``_words`` for lowercase ASCII text, with regular expressions (the hot path for queries)."""
    text = _ASCII_INNER_APOSTROPHE.sub("", _ASCII_POSSESSIVE.sub("", text))
    return _ASCII_NON_WORD.sub(" ", text).split()


def strip_article(words: list[str]) -> list[str]:
    """Drop a leading "the"/"a"/"an" when the next word is not an article too.

    Keeping ``"the a"`` or ``"a"`` whole makes the rule idempotent: a key
    normalizes to itself.
    """
    if len(words) > 1 and words[0] in ARTICLES and words[1] not in ARTICLES:
        return words[1:]
    return words


def normalize_name(s: str) -> str:
    """The lookup key of an entity name.

    NFKD with accents removed, casefolded, punctuation and symbols replaced by
    spaces (intra-word apostrophes and a possessive "'s" dropped), whitespace
    collapsed and a leading article removed (see ``strip_article``):
    ``"The Beatles"`` -> ``"beatles"``, ``"Café O'Brien-Smith"`` ->
    ``"cafe obrien smith"``. Idempotent.

    Args:
        s: a display name.

    Returns:
        The key; ``""`` when ``s`` has no word characters.
    """
    if not isinstance(s, str):
        raise ValidationError(f"entity name must be a str, got {type(s).__name__}", field="name")
    return _normalize(s)


@functools.lru_cache(maxsize=1 << 16)
def _normalize(s: str) -> str:
    # Cached: a corpus names the same entities over and over.
    return " ".join(strip_article(_words(s)))


def candidate_spans(query: str, max_len: int = 6) -> list[str]:
    """Every normalized contiguous word n-gram of ``query``, for exact entity lookup.

    The query is normalized like a name (keeping its article), cut into n-grams
    of 1..``max_len`` words, and each n-gram loses a leading article as
    ``normalize_name`` would, so every span is a possible entity key. Spans
    come longest (in words) first, then left to right; each appears once.

    Args:
        query: free text.
        max_len: longest n-gram, in words (>= 1).

    Returns:
        The distinct spans.
    """
    if not isinstance(query, str):
        raise ValidationError(f"query must be a str, got {type(query).__name__}", field="query")
    if isinstance(max_len, bool) or not isinstance(max_len, int) or max_len < 1:
        raise ValidationError(f"max_len must be an int >= 1, got {max_len!r}", field="max_len")
    words = _words(query)
    article = [w in ARTICLES for w in words]
    seen: dict[str, int] = {}  # span -> minus its words, in first-seen order
    for n in range(min(max_len, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            j = i + 1 if n > 1 and article[i] and not article[i + 1] else i  # strip_article, inline
            seen.setdefault(" ".join(words[j : i + n]), j - i - n)
    # Stable sort: an n-gram shortened by its article moves down to its new length.
    return sorted(seen, key=seen.__getitem__)
