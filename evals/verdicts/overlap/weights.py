"""Traffic weights: how much each query of a query set drawn from traffic stands for.

A query set made by ``searchtrace queries from-traces`` records, for each query,
how many searches asked it (``count``) and its chance to be in the sample
(``inclusion_probability``, ``querysets.sampling``). The mean a user of the
traffic sees weighs each search once: ``sum_q count_q v_q / sum_q count_q`` over
every distinct query asked. From the sample, the Horvitz-Thompson estimates of
both sums weigh each query by ``count / inclusion_probability``; their ratio (the
Hajek form) is the traffic-weighted mean reported. With every query taken
(``--sample all``: probability 1) it is the count-weighted mean.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from searchtrace.errors import SearchtraceError
from searchtrace.evals.labels.querysets import QueryOrigin, origins

__all__ = ["read_origins", "traffic_weights", "weighted_mean"]


def read_origins(dataset: str) -> tuple[dict[str, QueryOrigin] | None, str | None]:
    """What each query of ``dataset`` records of its traffic when it is a query set from traffic (None
    otherwise), and a note when it is one whose queries cannot be read, or it is gone."""
    folder = Path(dataset)
    try:
        found = origins(folder)
    except (SearchtraceError, OSError) as exc:
        return None, f"no traffic weights: {getattr(exc, 'message', exc)}"
    if found is None:
        return None, None if folder.exists() else f"no traffic weights: the runs' dataset {folder} is gone"
    return found, None


def traffic_weights(found: Mapping[str, QueryOrigin] | None, query_ids: Sequence[str]
                    ) -> tuple[np.ndarray | None, str | None]:
    """Each query's ``count / inclusion_probability`` (None without origins), and a note when some lack one."""
    if found is None:
        return None, None
    missing = sum(q not in found for q in query_ids)
    if missing:
        return None, f"no traffic weights: {missing} queries of the runs lack their count in the query set"
    return np.array([found[q].count / found[q].inclusion_probability for q in query_ids], dtype=np.float64), None


def weighted_mean(values: np.ndarray, weights: np.ndarray | None = None) -> float:
    """The mean of ``values`` (weighted when ``weights`` are given), NaN left out; NaN when nothing is left."""
    keep = ~np.isnan(values)
    if not keep.any():
        return float("nan")
    if weights is None:
        return float(values[keep].mean())
    return float(np.average(values[keep], weights=weights[keep]))
