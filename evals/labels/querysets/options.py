"""The choices a query set is made with: which surfaces are traffic, and how queries are sampled.

Light on purpose (no numpy, no store): the command line builds its ``--help`` from them.
"""

from __future__ import annotations

import enum

from searchtrace.traces import vocabulary

__all__ = ["TRAFFIC_SOURCES", "Sampling"]

TRAFFIC_SOURCES = (vocabulary.Source.HTTP, vocabulary.Source.MCP, vocabulary.Source.CLI, vocabulary.Source.PYTHON)
"""The surfaces whose searches are traffic. An eval's searches ask its own dataset's queries: never used."""


class Sampling(str, enum.Enum):
    """How a query set picks among the distinct queries (see ``querysets.sampling``)."""

    ALL = "all"
    RANDOM = "random"
    FREQUENCY = "frequency"
    TOP = "top"
