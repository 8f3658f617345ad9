"""Comparing two runs by their rankings alone: no labels needed (a query set from traffic, before judging).

For every query both runs searched: rank-biased overlap at each p (:mod:`.rank_biased`),
Jaccard@k and the documents new in the candidate's top k (:mod:`.topk`), each
side's best band, the latency change and both trace ids. The runs must have
searched the same queries (:func:`searchtrace.evals.verdicts.comparability.check`, labels
not compared: they are not used).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from searchtrace.errors import ValidationError
from searchtrace.evals.runs.runfolder import RunFolder
from searchtrace.evals.scoring.overlap.rank_biased import rbo_arrays
from searchtrace.evals.verdicts.comparability import check
from searchtrace.evals.verdicts.overlap.pairs import Paired, pair_runs
from searchtrace.evals.verdicts.overlap.result import OverlapComparison
from searchtrace.evals.verdicts.overlap.sides import Side, read_side
from searchtrace.evals.verdicts.overlap.weights import read_origins, traffic_weights

__all__ = ["DEFAULT_K", "DEFAULT_PS", "compare_overlap"]

DEFAULT_PS = (0.9, 0.98)
"""RBO's persistences. At 0.9 the top 10 ranks carry 86% of the weight (eq. 21): a results page. At 0.98 the top
50 carry 85% and the top 100 96%: the deeper ranking a run keeps (100 results by default) counts, what the
candidates behind a page (re-ranking, pooling for judges) see, and little of the score is extrapolated."""

DEFAULT_K = 10
"""Jaccard@k's and new-in-top-k's cutoff: the ten results of a page."""

BLOCK_CELLS = 1 << 22
"""RBO is computed over blocks of queries whose (queries x depth) arrays hold at most this many cells: 10,000
queries of 100 results are one block; deep rankings take several, and memory stays flat."""

RunLike = str | os.PathLike[str] | RunFolder


def _folder(run: RunLike) -> RunFolder:
    return run if isinstance(run, RunFolder) else RunFolder.completed(run)


def _check_arguments(ps: tuple[float, ...], k: int) -> None:
    bad = [p for p in ps if not 0 < p < 1]
    if not ps or bad:
        raise ValidationError(f"p must be in (0, 1), got {bad or 'none'}", field="p")
    if k < 1:
        raise ValidationError(f"k must be at least 1, got {k}", field="k")


def _shared(base: Side, candidate: Side) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the queries both searched, in the base's order, in each side's per-query arrays."""
    where = {q: i for i, q in enumerate(candidate.query_ids.tolist())}
    rows = [(i, where[q]) for i, q in enumerate(base.query_ids.tolist()) if q in where]
    return (np.array([r[0] for r in rows], dtype=np.int64), np.array([r[1] for r in rows], dtype=np.int64))


def _rbo(paired: Paired, ps: tuple[float, ...]) -> np.ndarray:
    """(len(ps), 3, n): ext, min and res at each p, a block of queries at a time."""
    out = np.empty((len(ps), 3, paired.n))
    step = max(1, BLOCK_CELLS // (paired.depth() + 1))
    for first in range(0, paired.n, step):
        last = min(first + step, paired.n)
        prefixes = paired.prefixes(first, last)
        for i, p in enumerate(ps):
            out[i, :, first:last] = rbo_arrays(prefixes, p)
    return out


def _empty_note(lengths: tuple[np.ndarray, np.ndarray]) -> str | None:
    empty = int(((lengths[0] == 0) & (lengths[1] == 0)).sum())
    return f"{empty} queries have no result in either run: their RBO is 1, by definition" if empty else None


def compare_overlap(base: RunLike, candidate: RunLike, *, ps: tuple[float, ...] = DEFAULT_PS,
                    k: int = DEFAULT_K) -> OverlapComparison:
    """Compare two completed runs' rankings, query by query (see the module docstring).

    Raises:
        NotFoundError: a run folder is missing or incomplete.
        ValidationError: the runs cannot be compared (no query in common, different queries), naming why; a
            ``p`` outside (0, 1) or ``k`` below 1.
    """
    _check_arguments(ps, k)
    folders = _folder(base), _folder(candidate)
    with ThreadPoolExecutor(max_workers=3) as pool:  # the readers spend their time in numpy, GIL released
        sides = [pool.submit(read_side, f) for f in folders]
        origins = pool.submit(read_origins, folders[0].summary().dataset.path)
        b, c = (side.result() for side in sides)
    verdict = check(b.summary, c.summary, b.query_ids.tolist(), c.query_ids.tolist(), labels=False)
    verdict.require()
    rows_b, rows_c = _shared(b, c)
    ids = b.query_ids[rows_b]
    paired = pair_runs(b.run, c.run, ids.tolist())
    jaccard, new = paired.top_k(k)
    found, gone = origins.result()
    weights, weight_note = traffic_weights(found, ids.tolist())
    notes = tuple(n for n in (*verdict.notes, gone, weight_note, _empty_note(paired.lengths())) if n)
    return OverlapComparison(
        base=b.folder.run_id, candidate=c.folder.run_id, ps=tuple(ps), k=k, query_ids=ids,
        rbo=_rbo(paired, ps), jaccard=jaccard, new_in_top=new,
        bands=np.stack([b.bands[rows_b], c.bands[rows_c]]), latency_delta_ms=c.latency_ms[rows_c] - b.latency_ms[rows_b],
        trace_ids=np.stack([b.trace_ids[rows_b], c.trace_ids[rows_c]]), weights=weights,
        only_in_base=verdict.only_in_base, only_in_candidate=verdict.only_in_candidate, notes=notes,
        homes=(_home(b), _home(c)))


def _home(side: Side) -> str | None:
    """The home folder the run was made in (its retriever's configuration records it), or None."""
    home = side.summary.retriever.config.get("home")
    return home if isinstance(home, str) else None
