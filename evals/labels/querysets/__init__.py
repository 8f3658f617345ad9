"""Query sets from traffic: the queries stored traces asked, de-duplicated, sampled, written as a BEIR dataset.

``options`` names the traffic sources and the samplings; ``traffic`` groups traces by normalized query text under stable ids; ``sampling``
picks among them (all, random, frequency-weighted, top) with inclusion
probabilities; ``folder`` owns the written folder's format; ``build`` reads the
trace store and composes them (:func:`queries_from_traces`); ``cli`` is
``searchtrace queries from-traces``. Names load their module on first use, so the
command line's ``--help`` loads neither numpy nor the store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchtrace._lazy import exports

if TYPE_CHECKING:
    from searchtrace.evals.labels.querysets.build import QuerySet, TrafficFilter, queries_from_traces
    from searchtrace.evals.labels.querysets.folder import FORMAT_VERSION, QueryOrigin, QuerySetInfo, origins, read_info
    from searchtrace.evals.labels.querysets.options import TRAFFIC_SOURCES, Sampling
    from searchtrace.evals.labels.querysets.sampling import Sample, sample, successive_inclusion
    from searchtrace.evals.labels.querysets.traffic import Traffic, TrafficQuery, normalize, query_id

__getattr__, __dir__, __all__ = exports(__name__, __file__)
