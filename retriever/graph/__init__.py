"""Graph stores: the in-process default and Neo4j over Bolt, one contract (``base.GraphStore``)."""

from searchtrace.retriever.graph.base import GraphStore
from searchtrace.retriever.graph.memory import MemoryGraph
from searchtrace.retriever.graph.normalize import candidate_spans, normalize_name

__all__ = ["GraphStore", "MemoryGraph", "candidate_spans", "normalize_name"]
