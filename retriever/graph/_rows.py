"""Turn loaded triples and aliases into entity and relation rows, shared by every backend."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from searchtrace.errors import ValidationError
from searchtrace.retriever.graph.normalize import normalize_name
from searchtrace.retriever.types import Triple


@dataclass(frozen=True, slots=True)
class EntityRow:
    """An entity to create or merge: key, display name (first seen) and alias keys."""

    key: str
    name: str
    aliases: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RelationRow:
    """A relation between two entity keys, from one document."""

    subject: str
    relation: str
    object: str
    doc_id: str


@dataclass(frozen=True, slots=True)
class Rows:
    """Everything one ``load`` call writes, deduplicated, in input order."""

    entities: tuple[EntityRow, ...]
    relations: tuple[RelationRow, ...]


def key_list(values: Iterable[str], field: str) -> list[str]:
    """``values`` as a list of distinct strings in order; a bare ``str`` is refused."""
    if isinstance(values, (str, bytes)):
        raise ValidationError(f"{field} must be an iterable of str, not a single string", field=field)
    out = list(dict.fromkeys(values))
    bad = [v for v in out if not isinstance(v, str)]
    if bad:
        raise ValidationError(f"{field} must hold only str, got {type(bad[0]).__name__}", field=field)
    return out


def build_rows(triples: Iterable[Triple], aliases: Mapping[str, Iterable[str]] | None = None) -> Rows:
    """Validate and key the input of ``GraphStore.load``.

    A triple whose subject or object normalizes to ``""`` or whose relation is
    blank is skipped; repeated ``(subject key, relation, object key, doc_id)``
    are kept once. Every name in ``aliases`` becomes an entity too.

    Raises:
        ValidationError: an item is not a ``Triple`` or an alias is not a str.
    """
    names: dict[str, str] = {}
    alias_keys: dict[str, dict[str, None]] = {}  # entity key -> ordered set of alias keys
    relations: dict[RelationRow, None] = {}
    for i, t in enumerate(triples):
        if not isinstance(t, Triple):
            raise ValidationError(f"triples[{i}] must be a Triple, got {type(t).__name__}", field="triples")
        if not all(isinstance(v, str) for v in t.key()):
            raise ValidationError(f"triples[{i}] fields must all be str: {t!r}", field="triples")
        s, o = normalize_name(t.subject), normalize_name(t.object)
        relation = t.relation.strip()
        if not s or not o or not relation:
            continue
        names.setdefault(s, t.subject.strip())
        names.setdefault(o, t.object.strip())
        relations.setdefault(RelationRow(s, relation, o, t.doc_id))
    if aliases is not None and not isinstance(aliases, Mapping):
        raise ValidationError(f"aliases must be a mapping of name to names, got {type(aliases).__name__}", field="aliases")
    for name, extra in (aliases or {}).items():
        key = normalize_name(name)
        if not key:
            continue
        names.setdefault(key, name.strip())
        bucket = alias_keys.setdefault(key, {})
        for alias in key_list(extra, "aliases"):
            a = normalize_name(alias)
            if a and a != key:
                bucket.setdefault(a)
    entities = tuple(EntityRow(k, n, tuple(alias_keys.get(k, ()))) for k, n in names.items())
    return Rows(entities, tuple(relations))
