"""Vector stores: Qdrant Edge in-process (default) and a Qdrant server, one contract (``base.VectorStore``)."""

from searchtrace.retriever.vectorstore.base import DENSE, SPARSE, Hit, PayloadFilter, PointRow, Sparse, VectorStore

__all__ = ["DENSE", "SPARSE", "Hit", "PayloadFilter", "PointRow", "Sparse", "VectorStore"]
