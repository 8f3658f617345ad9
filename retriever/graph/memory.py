"""``MemoryGraph``: the embedded, in-process knowledge graph (the default backend).

Entities are interned to integers; relations are parallel lists indexed by
relation id and each entity keeps the ids of the relations touching it. A
search runs on an array copy of that (``_csr.GraphArrays``, built after
``connect`` and again after a ``load``): the breadth-first search is a few numpy
operations per hop (``_bfs``), and ``reach`` hands the graph stage integer
columns so it never re-keys names. The whole graph saves to one JSON file that
an index folder can carry.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from searchtrace.durable import write_atomic
from searchtrace.errors import DataError, NotFoundError
from searchtrace.retriever.graph import _bfs
from searchtrace.retriever.graph._csr import GraphArrays, build_arrays
from searchtrace.retriever.graph._rows import build_rows, key_list
from searchtrace.retriever.graph._traverse import check_depth_limit
from searchtrace.retriever.graph.reach import Reach
from searchtrace.retriever.types import Entity, GraphHit, Triple

FORMAT = "searchtrace.memory-graph"
VERSION = 1


class MemoryGraph:
    """A ``GraphStore`` held in Python lists and dicts.

    Args:
        path: a file written by ``save``; ``connect`` loads it. ``None`` starts empty.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._reset()

    def _reset(self) -> None:
        self._index: dict[str, int] = {}  # entity key -> entity id
        self._keys: list[str] = []
        self._names: list[str] = []
        self._aliases: list[dict[str, None]] = []  # entity id -> ordered set of alias keys
        self._by_alias: dict[str, dict[int, None]] = {}
        self._rel_ids: dict[tuple[int, str, int, str], int] = {}
        self._rels: list[tuple[int, str, int, str]] = []  # (subject id, relation, object id, doc id)
        self._adj: list[list[int]] = []  # entity id -> relation ids touching it
        self._by_doc: dict[str, list[int]] = {}  # doc id -> its relation ids
        self._triples: list[Triple | None] = []  # relation id -> its Triple, made on first use
        self._arrays: GraphArrays | None = None  # built on demand, dropped by any change

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> MemoryGraph:
        """The graph saved at ``path``.

        Raises:
            NotFoundError: ``path`` does not exist.
            DataError: the file is not a saved ``MemoryGraph``.
        """
        if not Path(path).is_file():
            raise NotFoundError(f"no graph file at {path}", field="path")
        graph = cls(path)
        graph.connect()
        return graph

    def connect(self) -> None:
        """Load ``path`` when it names an existing file, replacing the contents.

        A missing file leaves the graph empty, so an index build can
        ``connect``, ``load`` and then ``save`` to the same path.

        Raises:
            DataError: the file is not a saved ``MemoryGraph``.
        """
        if self.path is None or not self.path.exists():
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise DataError(str(self.path), None, f"not a graph file: {e}") from e
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
            raise DataError(str(self.path), None, f"expected format {FORMAT!r} version {VERSION}")
        self._reset()
        try:
            for key, name, aliases in data["entities"]:
                self._add_entity(key, name, aliases)
            for s, relation, o, doc_id in data["relations"]:
                self._add_relation(self._index[s], relation, self._index[o], doc_id)
        except (KeyError, TypeError, ValueError) as e:
            self._reset()
            raise DataError(str(self.path), None, f"malformed graph: {e!r}") from e
        self._arrays_now()

    def close(self) -> None:
        """Nothing to release; the contents stay."""

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the graph to ``path`` atomically (JSON, UTF-8). Returns the path."""
        target = Path(path)
        data = {
            "format": FORMAT,
            "version": VERSION,
            "entities": [[k, n, list(a)] for k, n, a in zip(self._keys, self._names, self._aliases)],
            "relations": [[self._keys[s], r, self._keys[o], d] for s, r, o, d in self._rels],
        }
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        write_atomic(target, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        return target

    def clear(self) -> None:
        self._reset()

    def load(self, triples: Iterable[Triple], aliases: Mapping[str, Iterable[str]] | None = None) -> int:
        """Add triples and aliases; returns the distinct valid triples given (see ``build_rows``)."""
        rows = build_rows(triples, aliases)
        for e in rows.entities:
            self._add_entity(e.key, e.name, e.aliases)
        for r in rows.relations:
            self._add_relation(self._index[r.subject], r.relation, self._index[r.object], r.doc_id)
        return len(rows.relations)

    def _add_entity(self, key: str, name: str, aliases: Iterable[str]) -> None:
        i = self._index.get(key)
        if i is None:
            i = self._index[key] = len(self._keys)
            self._keys.append(key)
            self._names.append(name)
            self._aliases.append({})
            self._adj.append([])
            self._arrays = None
        for a in aliases:
            self._aliases[i].setdefault(a)
            self._by_alias.setdefault(a, {}).setdefault(i)

    def _add_relation(self, s: int, relation: str, o: int, doc_id: str) -> None:
        rel = (s, relation, o, doc_id)
        if rel in self._rel_ids:
            return
        rid = self._rel_ids[rel] = len(self._rels)
        self._rels.append(rel)
        self._triples.append(None)
        self._arrays = None
        self._adj[s].append(rid)
        self._by_doc.setdefault(doc_id, []).append(rid)
        if o != s:
            self._adj[o].append(rid)

    def _entity(self, i: int) -> Entity:
        return Entity(self._keys[i], self._names[i], tuple(self._aliases[i]))

    def match_entities(self, names: Iterable[str]) -> list[Entity]:
        """Entities keyed or aliased by ``names``, in order of the first name matching each."""
        hits: dict[int, None] = {}
        index, by_alias = self._index, self._by_alias
        for name in key_list(names, "names"):
            exact, aliased = index.get(name), by_alias.get(name)
            if aliased is None:  # the common case: a key or nothing, no sort needed
                if exact is not None:
                    hits.setdefault(exact)
                continue
            matched = ([exact] if exact is not None else []) + list(aliased)
            for i in sorted(matched, key=self._keys.__getitem__):
                hits.setdefault(i)
        return [self._entity(i) for i in hits]

    def _arrays_now(self) -> GraphArrays:
        arrays = self._arrays
        if arrays is None:
            arrays = self._arrays = build_arrays(self._adj, self._rels, self._names)
        return arrays

    def _make_triple(self, rid: int) -> Triple:
        s, relation, o, doc_id = self._rels[rid]
        triple = self._triples[rid] = Triple(self._names[s], relation, self._names[o], doc_id)
        return triple

    def reach(self, entity_keys: Iterable[str], depth: int, limit: int) -> Reach:
        """``neighbourhood``'s hits with their entity, document and order columns (``reach.Reach``)."""
        check_depth_limit(depth, limit)
        seeds = key_list(entity_keys, "entity_keys")
        arrays = self._arrays_now()
        ids = np.array([self._index.get(k, -1 - i) for i, k in enumerate(seeds)], dtype=np.int64)
        found = _bfs.search(arrays, ids, depth, limit)
        rels, cache = found.relations, self._triples
        triples = [cache[r] or self._make_triple(r) for r in rels.tolist()]
        hits = tuple(map(GraphHit, triples, found.hops.tolist(), [seeds[i] for i in found.seeds.tolist()]))
        return Reach(hits, ids, arrays.subject[rels], arrays.object[rels], arrays.doc[rels], arrays.doc_ids,
                     arrays.order[rels])

    def neighbourhood(self, entity_keys: Iterable[str], depth: int, limit: int) -> list[GraphHit]:
        return list(self.reach(entity_keys, depth, limit).hits)

    def document_entities(self, doc_ids: Iterable[str]) -> dict[str, list[str]]:
        out = {}
        for doc in key_list(doc_ids, "doc_ids"):
            rels = (self._rels[r] for r in self._by_doc.get(doc, ()))
            out[doc] = sorted({self._keys[e] for s, _, o, _ in rels for e in (s, o)})
        return out

    def degree(self, entity_keys: Iterable[str]) -> dict[str, int]:
        out = {}
        for key in key_list(entity_keys, "entity_keys"):
            i = self._index.get(key)
            out[key] = len(self._adj[i]) if i is not None else 0
        return out

    def stats(self) -> dict[str, int]:
        return {"entities": len(self._keys), "relations": len(self._rels)}
