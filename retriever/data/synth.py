"""Seeded synthetic datasets in the BEIR layout, for scale benchmarks.

Every document ``i`` gets two distinctive pseudo-words no other document has,
belongs to a group of ``GROUP_SIZE`` consecutive documents sharing a group
word, and is about a person whose name is unique to it. Pseudo-words are
bijective, seeded maps of integers onto strings of two-letter syllables, and
their length tells the kind apart (given name 4 letters, surname 6, group 8,
distinctive word 10), so the labels are exact by construction: a query built
from document ``i``'s distinctive words and group word has grade 2 for ``i``,
grade 1 for the rest of its group, and no other document shares those words.
The consonants and vowels exclude the letters stemmer suffix rules need
(``e l s y c g``), so stemming does not merge two pseudo-words either.
Each document's triples say its person belongs to the group's circle and
knows the person of another document, whose triples in turn start there.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Sequence, TextIO

import numpy as np
from tqdm import tqdm

__all__ = ["GROUP_SIZE", "MAX_DOCS", "SynthSummary", "pseudo_embeddings", "synthesize"]

MAX_DOCS = 1_000_000
GROUP_SIZE = 4
DEFAULT_QUERIES = 1_000
PROGRESS_MIN_DOCS = 10_000
_SYLLABLES = tuple(c + v for c in "bdkmnprtz" for v in "aiou")
_EPOCH = date(2015, 1, 1)
# Plain English filler; none is a pseudo-word (tests check).
_NOUNS = (
    "harbour", "ledger", "lantern", "market", "bridge", "orchard", "cargo", "rope", "anchor", "tower",
    "garden", "letter", "record", "chart", "kettle", "loom", "hive", "quarry", "mill", "well",
    "festival", "voyage", "storm", "treaty", "workshop", "archive", "feast", "vessel", "barrel", "meadow",
)
_ADJECTIVES = (
    "old", "quiet", "northern", "salted", "painted", "broken", "narrow", "golden", "crowded", "distant",
    "hidden", "winter", "famous", "small", "crooked", "restored",
)
_VERBS = ("described", "repaired", "inspected", "sketched", "catalogued", "sold", "measured", "guarded")
_RELATIONS = ("knows", "trades with", "writes to", "apprenticed with")
_COLLECTIONS = ("ledgers", "letters", "surveys", "journals")


@dataclass(frozen=True)
class SynthSummary:
    """What :func:`synthesize` wrote."""

    root: Path
    n_docs: int
    n_queries: int
    n_triples: int
    n_qrels: int


class _Words:
    """A seeded bijection from ``range(36 ** syllables)`` onto pseudo-words."""

    def __init__(self, seed: int, syllables: int) -> None:
        rng = random.Random(f"{seed}:words:{syllables}")
        self.syllables = syllables
        self.size = len(_SYLLABLES) ** syllables
        self.alphabet = rng.sample(_SYLLABLES, len(_SYLLABLES))
        self.mul = next(m for m in iter(lambda: rng.randrange(1, self.size), None) if math.gcd(m, 6) == 1)
        self.add = rng.randrange(self.size)

    def permute(self, index: int) -> int:
        """An affine map modulo ``6 ** (2 * syllables)``: a bijection since ``mul`` is coprime to 6."""
        return (self.mul * index + self.add) % self.size

    def __call__(self, index: int) -> str:
        x = self.permute(index)
        parts = []
        for _ in range(self.syllables):
            x, digit = divmod(x, len(_SYLLABLES))
            parts.append(self.alphabet[digit])
        return "".join(parts)


class _World:
    """The deterministic names of document ``i``: person, group and distinctive words."""

    def __init__(self, seed: int) -> None:
        self.given, self.surname = _Words(seed, 2), _Words(seed, 3)
        self.group_word, self.distinct = _Words(seed, 4), _Words(seed, 5)

    def person(self, i: int) -> str:
        # Scramble first so neighbours share neither given name nor surname.
        family, given = divmod(self.distinct.permute(i), self.given.size)
        return f"{self.given(given).capitalize()} {self.surname(family).capitalize()}"

    def group(self, i: int) -> str:
        return self.group_word(i // GROUP_SIZE).capitalize()

    def words(self, i: int) -> tuple[str, str]:
        return self.distinct(2 * i), self.distinct(2 * i + 1)


def _doc_id(i: int) -> str:
    return f"d{i:07d}"


def _document(world: _World, rng: random.Random, i: int, n_docs: int) -> tuple[dict, dict]:
    """The corpus line and triples line of document ``i``."""
    person, group = world.person(i), world.group(i)
    first, second = world.words(i)
    noun, other, place = rng.sample(_NOUNS, 3)
    adjective, verb = rng.choice(_ADJECTIVES), rng.choice(_VERBS)
    filler = " ".join(rng.choices(_ADJECTIVES + _NOUNS, k=rng.randint(6, 14)))
    sentences = [
        f"{person} of the {group} Circle {verb} the {first} {noun} beside the {adjective} {place}.",
        f"The entry also lists {filler}.",
    ]
    triples = [[person, "member of", f"{group} Circle"]]
    if n_docs > 1:
        peer = world.person((i + 1 + rng.randrange(n_docs - 1)) % n_docs)
        relation = rng.choice(_RELATIONS)
        sentences.append(f"{person} {relation} {peer} about the {second} {other}.")
        triples.append([person, relation, peer])
    else:
        sentences.append(f"Nobody else saw the {second} {other}.")
    doc_id = _doc_id(i)
    doc = {
        "_id": doc_id,
        "title": f"{person} and the {first} {noun}",
        "text": " ".join(sentences),
        "metadata": {
            "collection": _COLLECTIONS[i % len(_COLLECTIONS)],
            "tags": [noun, other],
            "language": "en",
            "url": f"https://synth.searchtrace.invalid/doc/{doc_id}",
            "timestamp": (_EPOCH + timedelta(days=rng.randrange(3650))).isoformat(),
        },
    }
    entities = sorted({t[0] for t in triples} | {t[2] for t in triples})
    return doc, {"_id": doc_id, "entities": entities, "triples": triples}


def _write(handle: TextIO, record: dict) -> None:
    handle.write(json.dumps(record, ensure_ascii=False))
    handle.write("\n")


def _write_docs(root: Path, world: _World, seed: int, n_docs: int, progress: bool | None) -> int:
    """Stream ``corpus.jsonl`` and ``triples.jsonl``; returns the number of triples."""
    rng = random.Random(f"{seed}:docs")
    disable = (n_docs < PROGRESS_MIN_DOCS or None) if progress is None else not progress
    n_triples = 0
    with (
        (root / "corpus.jsonl").open("w", encoding="utf-8", newline="\n") as corpus,
        (root / "triples.jsonl").open("w", encoding="utf-8", newline="\n") as triples,
    ):
        for i in tqdm(range(n_docs), desc="synth docs", unit="doc", disable=disable):
            doc, facts = _document(world, rng, i, n_docs)
            _write(corpus, doc)
            _write(triples, facts)
            n_triples += len(facts["triples"])
    return n_triples


def _write_queries(root: Path, world: _World, seed: int, n_docs: int, n_queries: int) -> int:
    """Write ``queries.jsonl`` and ``qrels/test.tsv``; returns the number of qrels rows."""
    rng = random.Random(f"{seed}:queries")
    n_rows = 0
    (root / "qrels").mkdir(exist_ok=True)
    with (
        (root / "queries.jsonl").open("w", encoding="utf-8", newline="\n") as queries,
        (root / "qrels" / "test.tsv").open("w", encoding="utf-8", newline="\n") as qrels,
    ):
        qrels.write("query-id\tcorpus-id\tscore\n")
        for k, target in enumerate(rng.sample(range(n_docs), n_queries)):
            first, second = world.words(target)
            noun = rng.choice(_NOUNS)
            text = f"Which {noun} record of the {world.group(target)} Circle mentions {first} and {second}?"
            query_id = f"q{k:07d}"
            meta = {"category": "keyword-exact", "target": _doc_id(target)}
            _write(queries, {"_id": query_id, "text": text, "metadata": meta})
            start = target - target % GROUP_SIZE
            for i in range(start, min(start + GROUP_SIZE, n_docs)):
                qrels.write(f"{query_id}\t{_doc_id(i)}\t{2 if i == target else 1}\n")
                n_rows += 1
    return n_rows


def _check_count(name: str, value: object, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
        raise ValueError(f"{name} must be an integer from 1 to {high:,}, got {value!r}")
    return value


def synthesize(
    out_dir: str | Path,
    n_docs: int,
    seed: int,
    n_queries: int | None = None,
    *,
    progress: bool | None = None,
) -> SynthSummary:
    """Write a seeded synthetic dataset with exact labels in the BEIR layout.

    Writes ``corpus.jsonl``, ``triples.jsonl``, ``queries.jsonl`` and
    ``qrels/test.tsv`` into ``out_dir`` (created if needed, files replaced).
    The same arguments always give byte-identical files. Documents are
    streamed, so memory does not grow with ``n_docs``; only the query
    targets are held.

    Args:
        out_dir: destination folder.
        n_docs: number of documents, 1 to 1,000,000.
        seed: any integer; the whole output is a function of it.
        n_queries: number of queries, 1 to ``n_docs``; default
            ``min(n_docs, 1000)``. Each targets a distinct document.
        progress: show a tqdm bar; default only for 10,000+ documents on a TTY.

    Returns:
        A summary of the counts written.

    Raises:
        ValueError: ``n_docs``, ``n_queries`` or ``seed`` out of range or not
            integers.
    """
    n_docs = _check_count("n_docs", n_docs, MAX_DOCS)
    n_queries = _check_count("n_queries", min(n_docs, DEFAULT_QUERIES) if n_queries is None else n_queries, n_docs)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    root = Path(out_dir)
    root.mkdir(parents=True, exist_ok=True)
    world = _World(seed)
    n_triples = _write_docs(root, world, seed, n_docs, progress)
    n_qrels = _write_queries(root, world, seed, n_docs, n_queries)
    return SynthSummary(root, n_docs, n_queries, n_triples, n_qrels)


_WORD = re.compile(r"[a-z]+")
_PSEUDO_WORD = re.compile(r"(?:[bdkmnprtz][aiou])+")
PSEUDO_BUCKETS = 1 << 15


def pseudo_embeddings(texts: Sequence[str], seed: int = 0, dim: int = 384,
                      buckets: int = PSEUDO_BUCKETS, english_weight: float = 0.2) -> np.ndarray:
    """Deterministic stand-in dense vectors: float32 ``(len(texts), dim)``, unit L2 norm rows.

    Each distinct lower-cased word of a text is hashed (blake2b) onto one of
    ``buckets`` fixed random Gaussian ``dim``-vectors drawn from ``seed``; a text's
    vector is the normalized weighted sum over its distinct words, pseudo-words
    (names, group and distinctive words) weighing 1 and plain English words
    ``english_weight`` (they are shared by most documents and would otherwise
    drown the signal, as a real model weighs rare content words more). Texts
    sharing words get similar vectors, so a synthetic query is close to its
    target document (they share its distinctive and group words), then to the
    target's group. Not a language model: for scale benchmarks where real
    embedding would take hours.
    """
    table = np.random.default_rng(seed).standard_normal((buckets, dim), dtype=np.float32)
    weights = np.array([english_weight, 1.0], dtype=np.float32)
    bucket_of: dict[str, tuple[int, int]] = {}
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for row, text in enumerate(texts):
        idx, kind = [], []
        for word in set(_WORD.findall(text.lower())):
            found = bucket_of.get(word)
            if found is None:
                digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
                found = bucket_of[word] = (int.from_bytes(digest, "little") % buckets,
                                           int(_PSEUDO_WORD.fullmatch(word) is not None))
            idx.append(found[0])
            kind.append(found[1])
        if idx:
            vec = weights[kind] @ table[idx]
            out[row] = vec / max(float(np.linalg.norm(vec)), 1e-12)
    return out
