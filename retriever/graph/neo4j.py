"""``Neo4jGraph``: the knowledge graph on a Bolt server (Neo4j, or ArcadeDB's Bolt plugin).

Schema: ``(:Entity {g, key, uid, name, aliases})`` nodes, ``aliases`` holding the
normalized alias keys, and ``(subject)-[:REL {g, relation, doc_id}]->(object)``
relationships. ``g`` names the graph (an index's key): several indexes share one
database without touching each other's graphs, and ``uid`` (``g`` and ``key``)
is the unique key.

Every query is a constant string with parameters; nothing the caller passes is
ever formatted into Cypher. Only a common OpenCypher subset is used (UNWIND,
FOREACH, MERGE, list comprehensions, ``startNode``/``endNode``, ``elementId``)
and the neighbourhood is expanded one hop per query, never with a
variable-length pattern, so the same code runs on Neo4j 5+ and on ArcadeDB's
Bolt plugin. Alias lookup scans ``:Entity`` (no list-property index); key
lookups use the unique constraint's index.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, LiteralString

import neo4j
from neo4j import exceptions as neo4j_errors

from searchtrace.errors import BackendUnavailable, ValidationError
from searchtrace.retriever.graph._rows import build_rows, key_list
from searchtrace.retriever.graph._traverse import Edge, check_depth_limit, traverse
from searchtrace.retriever.types import Entity, GraphHit, Triple

SCHEMA: tuple[LiteralString, ...] = (
    "CREATE CONSTRAINT entity_uid IF NOT EXISTS FOR (e:Entity) REQUIRE e.uid IS UNIQUE",
)
# Graphs of searchtrace before graphs were scoped keyed entities by ``key`` alone.
LEGACY_SCHEMA: tuple[LiteralString, ...] = ("DROP CONSTRAINT entity_key IF EXISTS",)
# The first name wins; aliases are a union, in first-seen order.
MERGE_ENTITIES: LiteralString = """
UNWIND $rows AS row
MERGE (e:Entity {uid: row.uid})
WITH e, row, coalesce(e.aliases, []) AS old
SET e.g = $g, e.key = row.key, e.name = coalesce(e.name, row.name),
    e.aliases = old + [a IN row.aliases WHERE NOT a IN old]
"""
# FOREACH, not UNWIND + MATCH + MERGE: ArcadeDB 26.10 rejects the latter with a
# spurious "modified by a concurrent transaction" whenever one batch touches a
# node twice and the second relationship points into it. FOREACH is valid on Neo4j too.
MERGE_RELATIONS: LiteralString = """
FOREACH (row IN $rows |
  MERGE (s:Entity {uid: row.su})
  MERGE (o:Entity {uid: row.ou})
  MERGE (s)-[:REL {g: $g, relation: row.rel, doc_id: row.doc}]->(o))
"""
DELETE_BATCH: LiteralString = (
    "MATCH (e:Entity) WHERE e.g = $g WITH e LIMIT $n DETACH DELETE e RETURN count(*) AS n"
)
MATCH_BY_KEY: LiteralString = (
    "MATCH (e:Entity) WHERE e.uid IN $uids RETURN e.key AS key, e.name AS name, e.aliases AS aliases"
)
MATCH_BY_ALIAS: LiteralString = (
    "MATCH (e:Entity) WHERE e.g = $g AND any(a IN e.aliases WHERE a IN $names) "
    "RETURN e.key AS key, e.name AS name, e.aliases AS aliases"
)
ONE_HOP: LiteralString = """
MATCH (n:Entity)-[r:REL]-(:Entity)
WHERE n.uid IN $uids
WITH DISTINCT r
RETURN elementId(r) AS id, startNode(r).key AS s, startNode(r).name AS s_name,
       r.relation AS relation, endNode(r).key AS o, endNode(r).name AS o_name, r.doc_id AS doc_id
"""
DEGREE: LiteralString = """
MATCH (e:Entity) WHERE e.uid IN $uids
OPTIONAL MATCH (e)-[r:REL]-(:Entity)
RETURN e.key AS key, count(DISTINCT r) AS degree
"""
# No index on r.doc_id (ArcadeDB's Bolt plugin takes no relationship index DDL): a scan of the
# relationships, fine for the few documents a search asks about on a graph of this size; on
# Neo4j 5, `CREATE INDEX rel_doc FOR ()-[r:REL]-() ON (r.doc_id)` makes it a lookup.
DOCUMENT_ENTITIES: LiteralString = """
MATCH (s:Entity)-[r:REL]->(o:Entity)
WHERE r.g = $g AND r.doc_id IN $docs
RETURN r.doc_id AS doc, s.key AS s, o.key AS o
"""
COUNT_ENTITIES: LiteralString = "MATCH (e:Entity) WHERE e.g = $g RETURN count(e) AS n"
COUNT_RELATIONS: LiteralString = "MATCH (:Entity)-[r:REL]->(:Entity) WHERE r.g = $g RETURN count(r) AS n"
_UID = "\x1f"  # joins graph and key: a unit separator, which no normalized key holds

# Errors that mean "the server is not there / not usable right now".
_UNAVAILABLE = (
    neo4j_errors.ServiceUnavailable,
    neo4j_errors.SessionExpired,
    neo4j_errors.AuthError,
    neo4j_errors.TransientError,
    OSError,
)


def _batches(rows: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


class Neo4jGraph:
    """A ``GraphStore`` on a Bolt server.

    Args:
        uri: e.g. ``bolt://127.0.0.1:7687`` or ``neo4j://host``.
        user, password: basic auth.
        database: database name; ``None`` uses the server default.
        timeout_s: connect timeout and transaction timeout of every read.
        write_timeout_s: transaction timeout of every write batch.
        batch_size: rows per write query.
        graph: the graph's name in the database (an index's key); other graphs there are never
            read or changed.
    """

    def __init__(
        self,
        uri: str,
        user: str,
        password: str,
        database: str | None = None,
        timeout_s: float = 2.0,
        *,
        write_timeout_s: float = 60.0,
        batch_size: int = 1000,
        graph: str = "",
    ) -> None:
        if timeout_s <= 0 or write_timeout_s <= 0:
            raise ValidationError("timeouts must be > 0 seconds", field="timeout_s")
        if batch_size < 1:
            raise ValidationError(f"batch_size must be >= 1, got {batch_size}", field="batch_size")
        self.uri, self.database = uri, database
        self.timeout_s, self.write_timeout_s, self.batch_size = timeout_s, write_timeout_s, batch_size
        self._auth = (user, password)
        self.graph = graph
        self._driver: neo4j.Driver | None = None
        self._schema_ready = False

    def _where(self) -> str:
        return f"{self.uri} (database {self.database or '<default>'}, graph {self.graph or '<unnamed>'})"

    def _uid(self, key: str) -> str:
        return f"{self.graph}{_UID}{key}"

    def _uids(self, keys: Iterable[str]) -> list[str]:
        return [self._uid(k) for k in keys]

    def connect(self) -> None:
        """Create the driver and check the server answers a query.

        Raises:
            BackendUnavailable: the server cannot be reached, refuses the
                credentials or has no such database.
        """
        if self._driver is not None:
            return
        try:
            driver = neo4j.GraphDatabase.driver(
                self.uri,
                auth=self._auth,
                connection_timeout=self.timeout_s,
                connection_acquisition_timeout=self.timeout_s,
                max_transaction_retry_time=self.timeout_s,
            )
        except (ValueError, neo4j_errors.ConfigurationError) as e:
            raise ValidationError(f"invalid graph server uri {self.uri!r}: {e}", field="uri") from e
        try:
            driver.verify_connectivity()
            with driver.session(database=self.database, default_access_mode=neo4j.READ_ACCESS) as session:
                session.run(neo4j.Query("RETURN 1 AS ok", timeout=self.timeout_s)).consume()
        except (neo4j_errors.Neo4jError, neo4j_errors.DriverError, OSError) as e:
            driver.close()
            raise BackendUnavailable(f"graph server unavailable at {self._where()}: {e}") from e
        self._driver = driver

    def close(self) -> None:
        if self._driver is not None:
            self._driver.close()
            self._driver = None

    def _run(self, text: LiteralString, params: dict[str, Any], *, write: bool = False) -> list[neo4j.Record]:
        """One auto-commit query with a transaction timeout; no client-side retries."""
        if self._driver is None:
            raise BackendUnavailable(f"Neo4jGraph for {self._where()} is not connected: call connect() first")
        mode = neo4j.WRITE_ACCESS if write else neo4j.READ_ACCESS
        query = neo4j.Query(text, timeout=self.write_timeout_s if write else self.timeout_s)
        try:
            with self._driver.session(database=self.database, default_access_mode=mode) as session:
                return list(session.run(query, params))
        except _UNAVAILABLE as e:
            raise BackendUnavailable(f"graph server unavailable at {self._where()}: {e}") from e
        except neo4j_errors.Neo4jError as e:
            if "TransactionTimedOut" in (e.code or ""):
                raise BackendUnavailable(f"graph query timed out after {query.timeout}s at {self._where()}") from e
            raise

    def _ensure_schema(self) -> None:
        if not self._schema_ready:
            for statement in LEGACY_SCHEMA:
                try:
                    self._run(statement, {}, write=True)
                except neo4j_errors.Neo4jError:  # a server without the old constraint, or without DROP IF EXISTS
                    pass
            for statement in SCHEMA:
                self._run(statement, {}, write=True)
            self._schema_ready = True

    def clear(self) -> None:
        """Delete this graph's ``:Entity`` nodes and their relations, in batches (other graphs stay)."""
        while self._run(DELETE_BATCH, {"g": self.graph, "n": self.batch_size}, write=True)[0]["n"] >= self.batch_size:
            pass

    def load(self, triples: Iterable[Triple], aliases: Mapping[str, Iterable[str]] | None = None) -> int:
        """Merge entities, then relations, ``batch_size`` rows per query.

        Returns:
            The distinct valid triples given (see ``build_rows``), new or not.
        """
        rows = build_rows(triples, aliases)
        self._ensure_schema()
        entities = [{"uid": self._uid(e.key), "key": e.key, "name": e.name, "aliases": list(e.aliases)}
                    for e in rows.entities]
        for batch in _batches(entities, self.batch_size):
            self._run(MERGE_ENTITIES, {"g": self.graph, "rows": batch}, write=True)
        relations = [{"su": self._uid(r.subject), "rel": r.relation, "ou": self._uid(r.object), "doc": r.doc_id}
                     for r in rows.relations]
        for batch in _batches(relations, self.batch_size):
            self._run(MERGE_RELATIONS, {"g": self.graph, "rows": batch}, write=True)
        return len(rows.relations)

    def match_entities(self, names: Iterable[str]) -> list[Entity]:
        """Entities keyed or aliased by ``names``, in order of the first name matching each."""
        wanted = key_list(names, "names")
        if not wanted:
            return []
        position = {name: i for i, name in enumerate(wanted)}
        found: dict[str, tuple[int, Entity]] = {}
        for text, params in ((MATCH_BY_KEY, {"uids": self._uids(wanted)}),
                             (MATCH_BY_ALIAS, {"g": self.graph, "names": wanted})):
            for r in self._run(text, params):
                aliases = tuple(r["aliases"] or ())
                first = min(position[n] for n in (r["key"], *aliases) if n in position)
                found[r["key"]] = (first, Entity(r["key"], r["name"], aliases))
        return [e for _, e in sorted(found.values(), key=lambda fe: (fe[0], fe[1].key))]

    def _expand(self, keys: list[str]) -> list[Edge]:
        return [
            Edge(r["id"], r["s"], r["o"], Triple(r["s_name"], r["relation"], r["o_name"], r["doc_id"]))
            for r in self._run(ONE_HOP, {"uids": self._uids(keys)})
        ]

    def neighbourhood(self, entity_keys: Iterable[str], depth: int, limit: int) -> list[GraphHit]:
        """Breadth-first, one 1-hop query per level (at most ``depth`` queries)."""
        check_depth_limit(depth, limit)
        return traverse(key_list(entity_keys, "entity_keys"), depth, limit, self._expand)

    def document_entities(self, doc_ids: Iterable[str]) -> dict[str, list[str]]:
        docs = key_list(doc_ids, "doc_ids")
        found: dict[str, set[str]] = {d: set() for d in docs}
        for r in self._run(DOCUMENT_ENTITIES, {"g": self.graph, "docs": docs}) if docs else ():
            found[r["doc"]].update((r["s"], r["o"]))
        return {d: sorted(keys) for d, keys in found.items()}

    def degree(self, entity_keys: Iterable[str]) -> dict[str, int]:
        keys = key_list(entity_keys, "entity_keys")
        counts = {r["key"]: r["degree"] for r in self._run(DEGREE, {"uids": self._uids(keys)})} if keys else {}
        return {k: counts.get(k, 0) for k in keys}

    def stats(self) -> dict[str, int]:
        return {
            "entities": self._run(COUNT_ENTITIES, {"g": self.graph})[0]["n"],
            "relations": self._run(COUNT_RELATIONS, {"g": self.graph})[0]["n"],
        }
