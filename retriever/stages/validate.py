"""Validate stage: the request model at the boundary (see ``retriever.request``)."""

from searchtrace.retriever.request import SearchRequest, validate_request

__all__ = ["SearchRequest", "validate_request"]
