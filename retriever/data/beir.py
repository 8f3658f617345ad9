"""Loaders for datasets in the BEIR layout, plus our ``triples.jsonl``.

A dataset folder holds ``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``
and optionally ``triples.jsonl``. Every loader streams its file line by line
(one ``json.loads`` per line, no quadratic work) and raises
:class:`~retriever.errors.DataError` naming the file and the 1-based line of
the first malformed record. Blank lines are skipped but still counted.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import json
import re
from collections.abc import Container, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from retriever.errors import DataError
from retriever.types import Document, Triple

__all__ = [
    "Dataset",
    "IssueKind",
    "Query",
    "QrelsIssue",
    "QrelsReport",
    "fingerprint",
    "load_corpus",
    "load_dataset",
    "load_qrels",
    "load_queries",
    "load_triples",
]

QRELS_HEADER = ("query-id", "corpus-id", "score")
_DOC_FIELDS = ("collection", "tags", "language", "url", "timestamp")
_SPLIT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_CHUNK = 1 << 20
_BOM = "\ufeff"
_is_str = functools.partial(type.__instancecheck__, str)
_decode = json.JSONDecoder().decode


@dataclass(frozen=True)
class Query:
    """One query of ``queries.jsonl``; ``metadata`` is a read-only mapping."""

    id: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))

    @property
    def category(self) -> str:
        """The query's ``metadata["category"]``, or ``""``."""
        return self.metadata.get("category", "")


# --- line readers ------------------------------------------------------------


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, raw_line)`` for every non-blank line."""
    try:
        handle = path.open("rb")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
        raise DataError(str(path), None, f"cannot read file: {exc.strerror}") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            if raw.strip():
                yield number, raw


def _json_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)``; an empty file or a non-object line is an error."""
    empty = True
    for number, raw in _lines(path):
        empty = False
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(str(path), number, f"invalid JSON: not UTF-8 ({exc.reason})") from None
        if number == 1 and text.startswith(_BOM):
            text = text[1:]
        try:
            obj = _decode(text)
        except json.JSONDecodeError as exc:
            raise DataError(str(path), number, f"invalid JSON at column {exc.colno}: {exc.msg}") from None
        if type(obj) is not dict:
            raise DataError(str(path), number, f"expected a JSON object, got {type(obj).__name__}")
        yield number, obj
    if empty:
        raise DataError(str(path), 1, "empty file: expected at least one record")


def _take_id(path: Path, number: int, obj: dict[str, Any], seen: dict[str, int]) -> str:
    """The record's ``_id``, checked to be a new non-empty string."""
    if "_id" not in obj:
        raise DataError(str(path), number, "missing '_id'")
    value = obj["_id"]
    if not isinstance(value, str) or not value:
        raise DataError(str(path), number, f"'_id' must be a non-empty string, got {value!r}")
    first = seen.setdefault(value, number)
    if first != number:
        raise DataError(str(path), number, f"duplicate _id {value!r} (first on line {first})")
    return value


def _take_str(path: Path, number: int, obj: Mapping[str, Any], key: str, default: str | None) -> str:
    """``obj[key]`` checked to be a string; ``default`` when absent (None: required)."""
    if key not in obj:
        if default is None:
            raise DataError(str(path), number, f"missing '{key}'")
        return default
    value = obj[key]
    if not isinstance(value, str):
        raise DataError(str(path), number, f"'{key}' must be a string, got {type(value).__name__}")
    return value


def _take_object(path: Path, number: int, obj: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DataError(str(path), number, f"'{key}' must be an object, got {type(value).__name__}")
    return value


# --- corpus and queries ------------------------------------------------------


def _doc_fields(path: Path, number: int, obj: dict[str, Any]) -> dict[str, Any]:
    """Document fields from ``metadata`` or the top level (they must agree)."""
    meta = _take_object(path, number, obj, "metadata")
    fields: dict[str, Any] = {}
    for key in _DOC_FIELDS:
        in_meta, in_obj = key in meta, key in obj
        if not (in_meta or in_obj):
            continue
        value = meta[key] if in_meta else obj[key]
        if in_meta and in_obj and obj[key] != value:
            raise DataError(str(path), number, f"'{key}' differs between top level and metadata")
        if key == "tags":
            if type(value) is not list or not all(map(_is_str, value)):
                raise DataError(str(path), number, "'tags' must be a list of strings")
            value = tuple(value)
        elif type(value) is not str:
            raise DataError(str(path), number, f"'{key}' must be a string, got {type(value).__name__}")
        fields[key] = value
    stamp = fields.get("timestamp")
    if stamp:
        try:
            datetime.fromisoformat(stamp)
        except ValueError:
            raise DataError(str(path), number, f"'timestamp' is not ISO 8601: {stamp!r}") from None
    return fields


def load_corpus(path: str | Path) -> list[Document]:
    """Read ``corpus.jsonl`` lines ``{"_id", "title"?, "text", "metadata"?}``.

    Optional ``collection``, ``tags``, ``language``, ``url`` and ``timestamp``
    may sit in ``metadata`` or at the top level of the line.

    Raises:
        DataError: bad JSON, a missing or duplicate ``_id``, a non-string
            ``title``/``text``, a bad metadata value, or an empty file.
    """
    path = Path(path)
    seen: dict[str, int] = {}
    docs: list[Document] = []
    for number, obj in _json_objects(path):
        doc_id = _take_id(path, number, obj, seen)
        title = _take_str(path, number, obj, "title", "")
        text = _take_str(path, number, obj, "text", None)
        docs.append(Document(doc_id, title, text, **_doc_fields(path, number, obj)))
    return docs


def load_queries(path: str | Path) -> list[Query]:
    """Read ``queries.jsonl`` lines ``{"_id", "text", "metadata"?}``.

    Raises:
        DataError: bad JSON, a missing or duplicate ``_id``, empty or
            non-string ``text``, non-object ``metadata``, non-string
            ``metadata.category``, or an empty file.
    """
    path = Path(path)
    seen: dict[str, int] = {}
    queries: list[Query] = []
    for number, obj in _json_objects(path):
        query_id = _take_id(path, number, obj, seen)
        text = _take_str(path, number, obj, "text", None)
        if not text.strip():
            raise DataError(str(path), number, "empty query 'text'")
        meta = _take_object(path, number, obj, "metadata")
        if not isinstance(meta.get("category", ""), str):
            raise DataError(str(path), number, "'metadata.category' must be a string")
        queries.append(Query(query_id, text, meta))
    return queries


# --- qrels -------------------------------------------------------------------


def _qrels_rows(path: Path) -> Iterator[tuple[int, str, str, int]]:
    """Yield ``(line_number, query_id, doc_id, grade)``; a header may only be the first line."""
    pairs: dict[tuple[str, str], int] = {}
    first = True
    for number, raw in _lines(path):
        try:
            fields = [f.strip() for f in raw.decode("utf-8").rstrip("\r\n").split("\t")]
        except UnicodeDecodeError as exc:
            raise DataError(str(path), number, f"not UTF-8: {exc.reason}") from None
        if first and tuple(fields) == QRELS_HEADER:
            first = False
            continue
        first = False
        if len(fields) != 3:
            raise DataError(
                str(path), number, f"expected 3 tab-separated fields (query-id, corpus-id, score), got {len(fields)}"
            )
        query_id, doc_id, score = fields
        if not query_id or not doc_id:
            raise DataError(str(path), number, "empty query-id or corpus-id")
        try:
            grade = int(score)
        except ValueError:
            raise DataError(str(path), number, f"score must be an integer, got {score!r}") from None
        seen = pairs.setdefault((query_id, doc_id), number)
        if seen != number:
            raise DataError(str(path), number, f"duplicate pair ({query_id!r}, {doc_id!r}) (first on line {seen})")
        yield number, query_id, doc_id, grade
    if not pairs:
        raise DataError(str(path), 1, "empty file: expected at least one judgment")


def load_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Read a qrels TSV ``query-id<TAB>corpus-id<TAB>score`` (header optional).

    Returns:
        ``{query_id: {doc_id: grade}}`` with integer grades.

    Raises:
        DataError: a row without 3 fields, an empty id, a non-integer grade,
            a duplicate pair, or no rows at all.
    """
    qrels: dict[str, dict[str, int]] = {}
    for _, query_id, doc_id, grade in _qrels_rows(Path(path)):
        qrels.setdefault(query_id, {})[doc_id] = grade
    return qrels


# --- triples -----------------------------------------------------------------


def _take_triples(path: Path, number: int, obj: dict[str, Any], doc_id: str) -> list[Triple]:
    raw = obj.get("triples")
    if type(raw) is not list:
        raise DataError(str(path), number, "'triples' must be a list of [subject, relation, object]")
    triples = []
    for index, item in enumerate(raw):
        if type(item) is not list or len(item) != 3 or not all(type(s) is str and s.strip() for s in item):
            raise DataError(str(path), number, f"triples[{index}] must be 3 non-empty strings, got {item!r}")
        triples.append(Triple(item[0], item[1], item[2], doc_id))
    return triples


def _merge_aliases(path: Path, number: int, obj: dict[str, Any], into: dict[str, dict[str, None]]) -> None:
    """Add the line's ``aliases`` to ``into`` (name -> ordered set of aliases)."""
    for name, names in _take_object(path, number, obj, "aliases").items():
        if not isinstance(names, list) or not all(isinstance(n, str) and n.strip() for n in names):
            raise DataError(str(path), number, f"aliases[{name!r}] must be a list of non-empty strings")
        into.setdefault(name, {}).update(dict.fromkeys(names))


def load_triples(
    path: str | Path, known_ids: Container[str] | None = None
) -> tuple[list[Triple], dict[str, tuple[str, ...]]]:
    """Read ``triples.jsonl`` lines ``{"_id", "triples", "entities"?, "aliases"?}``.

    Every triple must be a list of 3 non-empty strings. The shared MuSiQue
    triples have no irregular ones (its builder dropped them upstream), so
    there is no lenient mode.

    Args:
        path: the file.
        known_ids: corpus ids; when given, an ``_id`` outside it is an error.

    Returns:
        The triples (each carrying its ``_id`` as ``doc_id``) and the aliases
        of all lines merged, ``{name: (alias, ...)}`` in first-seen order.

    Raises:
        DataError: bad JSON, a missing, duplicate or unknown ``_id``, a
            malformed triple (the message gives its index) or alias map.
    """
    path = Path(path)
    seen: dict[str, int] = {}
    triples: list[Triple] = []
    aliases: dict[str, dict[str, None]] = {}
    for number, obj in _json_objects(path):
        doc_id = _take_id(path, number, obj, seen)
        if known_ids is not None and doc_id not in known_ids:
            raise DataError(str(path), number, f"_id {doc_id!r} is not in the corpus")
        triples.extend(_take_triples(path, number, obj, doc_id))
        _merge_aliases(path, number, obj, aliases)
    return triples, {name: tuple(names) for name, names in aliases.items()}


# --- dataset -----------------------------------------------------------------


class IssueKind(str, enum.Enum):
    """Why a qrels row was dropped."""

    UNKNOWN_QUERY = "unknown_query"
    UNKNOWN_DOC = "unknown_doc"


@dataclass(frozen=True)
class QrelsIssue:
    """One qrels row that points at an id the dataset does not have."""

    path: str
    line: int
    query_id: str
    doc_id: str
    kind: IssueKind

    def message(self) -> str:
        if self.kind is IssueKind.UNKNOWN_QUERY:
            return f"{self.path}:{self.line}: unknown query id {self.query_id!r}"
        return f"{self.path}:{self.line}: unknown corpus id {self.doc_id!r} (query {self.query_id!r})"


@dataclass(frozen=True)
class QrelsReport:
    """Qrels rows dropped because their query or document does not exist."""

    issues: tuple[QrelsIssue, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.issues

    def messages(self) -> list[str]:
        """One ``path:line: what`` line per issue."""
        return [issue.message() for issue in self.issues]


@dataclass(frozen=True)
class Dataset:
    """A loaded dataset folder; ``qrels`` holds only the chosen ``split``."""

    root: Path
    name: str
    docs: tuple[Document, ...]
    queries: tuple[Query, ...]
    qrels: dict[str, dict[str, int]]
    split: str | None
    triples: tuple[Triple, ...] = ()
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    report: QrelsReport = QrelsReport()

    @property
    def has_triples(self) -> bool:
        return bool(self.triples)

    def queries_for_split(self) -> tuple[Query, ...]:
        """Queries judged in ``qrels``, plus ``unanswerable`` ones meant for this split.

        An unanswerable query has no qrels rows; it belongs to every split
        unless its ``metadata["split"]`` names another one.
        """
        return tuple(
            q
            for q in self.queries
            if q.id in self.qrels
            or (q.category == "unanswerable" and q.metadata.get("split", self.split) == self.split)
        )


def _choose_split(root: Path, split: str | None) -> str | None:
    """The qrels split to load: ``split``, else "test", else the first alphabetically."""
    folder = root / "qrels"
    available = sorted(p.stem for p in folder.glob("*.tsv")) if folder.is_dir() else []
    if split is None:
        return "test" if "test" in available else (available[0] if available else None)
    if not _SPLIT_NAME.fullmatch(split) or split not in available:
        raise DataError(str(folder), None, f"no qrels split {split!r}; available: {', '.join(available) or 'none'}")
    return split


def _filter_qrels(
    path: Path, query_ids: Container[str], doc_ids: Container[str]
) -> tuple[dict[str, dict[str, int]], QrelsReport]:
    """Load qrels, dropping (and reporting) rows with unknown ids."""
    qrels: dict[str, dict[str, int]] = {}
    issues: list[QrelsIssue] = []
    for number, query_id, doc_id, grade in _qrels_rows(path):
        bad = []
        if query_id not in query_ids:
            bad.append(IssueKind.UNKNOWN_QUERY)
        if doc_id not in doc_ids:
            bad.append(IssueKind.UNKNOWN_DOC)
        issues.extend(QrelsIssue(str(path), number, query_id, doc_id, kind) for kind in bad)
        if not bad:
            qrels.setdefault(query_id, {})[doc_id] = grade
    return qrels, QrelsReport(tuple(issues))


def load_dataset(root: str | Path, split: str | None = None) -> Dataset:
    """Load a BEIR-layout folder (``triples.jsonl`` and ``qrels/`` optional).

    Args:
        root: folder with ``corpus.jsonl`` and ``queries.jsonl``.
        split: qrels split; default "test" if present, else the first
            ``qrels/*.tsv`` alphabetically, else none (empty qrels).

    Raises:
        DataError: any malformed file, or a ``split`` that does not exist.
    """
    root = Path(root)
    docs = load_corpus(root / "corpus.jsonl")
    queries = load_queries(root / "queries.jsonl")
    doc_ids = {d.id for d in docs}
    chosen = _choose_split(root, split)
    qrels, report = ({}, QrelsReport())
    if chosen is not None:
        qrels, report = _filter_qrels(root / "qrels" / f"{chosen}.tsv", {q.id for q in queries}, doc_ids)
    triples: list[Triple] = []
    aliases: dict[str, tuple[str, ...]] = {}
    if (root / "triples.jsonl").exists():
        triples, aliases = load_triples(root / "triples.jsonl", doc_ids)
    return Dataset(
        root, root.resolve().name, tuple(docs), tuple(queries), qrels, chosen, tuple(triples), aliases, report
    )


def fingerprint(root: str | Path) -> str:
    """Content hash of a dataset's index inputs, independent of its folder name.

    sha256 over the bytes of ``corpus.jsonl`` and, when present, a NUL byte
    and ``triples.jsonl`` (NUL cannot occur in valid JSON lines). Without
    triples it equals ``sha256sum corpus.jsonl``.
    """
    root = Path(root)
    digest = hashlib.sha256()
    _hash_file(root / "corpus.jsonl", digest)
    if (root / "triples.jsonl").exists():
        digest.update(b"\0")
        _hash_file(root / "triples.jsonl", digest)
    return digest.hexdigest()


def _hash_file(path: Path, digest: Any) -> None:
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
    except (FileNotFoundError, IsADirectoryError) as exc:
        raise DataError(str(path), None, f"cannot read file: {exc.strerror}") from None
