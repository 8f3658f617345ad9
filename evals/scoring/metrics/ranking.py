"""The judged ranking: a (queries x depth) gain matrix built from a run and qrels.

This is the one place that joins a :class:`~evals.rankings.Run` to its
:class:`~evals.rankings.Qrels`; every metric is then a few array operations on the
:class:`Ranking` it returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from searchtrace.evals.scoring.interning import index_in
from searchtrace.evals.scoring.metrics.rules import QueryRules
from searchtrace.evals.scoring.rankings import Qrels, Run

__all__ = ["Ranking", "build_ranking", "ratio"]


@dataclass(frozen=True, eq=False)
class Ranking:
    """Gains of the ranked documents of each evaluated query.

    Attributes:
        gains: (n, depth) grade of the document at each rank (rank 1 first);
            0 for a non-relevant, unjudged or missing document.
        ideal: (n, ideal_depth) grades of the query's relevant documents,
            descending, 0-padded.
        n_rel: (n,) number of relevant documents (grade >= ``level``); 0 only
            under rules that score queries without one.
        level: the lowest relevant grade (trec_eval ``-l``); nDCG's gains and
            ideal ranking still use every grade > 0, as trec_eval's do.
        judged: (n, depth) bool: the document at each rank has a judgment for the query (any grade).
        length: (n,) documents ranked per query, up to ``depth``.
        n_nonrel: (n,) judged non-relevant documents per query (0 <= grade < ``level``), for bpref.
        negative: (n, depth) bool: judged with a negative grade (trec_eval: not in the pool; bpref skips it).
        top: the scale's top grade: the greatest an unjudged document could be given (nDCG's bounds).
    """

    gains: np.ndarray
    ideal: np.ndarray
    n_rel: np.ndarray
    level: int = 1
    judged: np.ndarray | None = None
    length: np.ndarray | None = None
    n_nonrel: np.ndarray | None = None
    negative: np.ndarray | None = None
    top: int = 1

    @cached_property
    def relevant(self) -> np.ndarray:
        """(n, depth) bool: the document at each rank is relevant."""
        return self.gains >= self.level


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator``, 0 where the denominator is 0 (trec_eval's value then)."""
    out = np.zeros(np.broadcast(numerator, denominator).shape, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def lookup(values: np.ndarray, vocab: np.ndarray) -> np.ndarray:
    """Index of each value in ``vocab``, -1 where absent (byte keys past 1,000 values, else a dict)."""
    found = index_in(values, vocab) if len(values) > 1000 and len(vocab) else None
    if found is not None:
        return found
    index = dict(zip(vocab.tolist(), range(len(vocab))))
    return np.fromiter(map(index.get, values.tolist(), [-1] * len(values)), dtype=np.int64, count=len(values))


def _positions(groups: np.ndarray) -> np.ndarray:
    """0-based position of each element within its run of equal ``groups`` values."""
    n = len(groups)
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]]) if n else np.zeros(0, dtype=np.int64)
    return np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))


def _grades(qrels: Qrels, query: np.ndarray, doc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Grade of each (qrels query code, qrels doc code) pair, 0 when unjudged (doc -1 included); and
    whether it is judged."""
    out = np.zeros(len(doc), dtype=np.int64)
    found = np.zeros(len(doc), dtype=bool)
    known = np.flatnonzero(doc >= 0)
    if len(qrels) == 0 or len(known) == 0:
        return out, found
    width = len(qrels.docs)
    keys = qrels.query_index.astype(np.int64) * width + qrels.doc_index
    order = np.argsort(keys)
    keys, grades = keys[order], qrels.grades[order]
    wanted = query[known] * width + doc[known]
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    hit = keys[at] == wanted
    out[known] = np.where(hit, grades[at], 0)
    found[known] = hit
    return out, found


def _ideal(qrels: Qrels, row_of_query: np.ndarray, n: int, depth: int) -> np.ndarray:
    relevant = qrels.grades > 0
    rows = row_of_query[qrels.query_index[relevant]]
    grades = qrels.grades[relevant]
    order = np.lexsort((-grades, rows))
    rows, grades = rows[order], grades[order]
    pos = _positions(rows)
    keep = pos < depth
    ideal = np.zeros((n, depth))
    ideal[rows[keep], pos[keep]] = grades[keep]
    return ideal


def _gains(
    qrels: Qrels, run: Run, run_query: np.ndarray, row_of_query: np.ndarray, n: int, depth: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(n x depth) grades of the run's ranked documents, whether each query has any, (n x depth) whether each
    is judged and whether its grade is negative, and how many each query ranks."""
    run_row = row_of_query[run_query][run.query_index]
    retrieved = np.bincount(run_row[run_row >= 0], minlength=n) > 0
    pos = _positions(run.query_index)
    longest = int(pos.max()) + 1 if len(pos) else 0
    depth = longest if depth is None else min(depth, longest)
    keep = (run_row >= 0) & (pos < depth)
    if not keep.all():  # usually every row counts: skip the gathers then
        keep = np.flatnonzero(keep)
        run_row, pos = run_row[keep], pos[keep]
        query_index, doc_index = run.query_index[keep], run.doc_index[keep]
    else:
        query_index, doc_index = run.query_index, run.doc_index
    grades, found = _grades(qrels, run_query[query_index], lookup(run.docs, qrels.docs)[doc_index])
    gains = np.zeros((n, depth))
    gains.ravel()[run_row * depth + pos] = np.maximum(grades, 0)
    judged = np.zeros((n, depth), dtype=bool)
    judged.ravel()[run_row * depth + pos] = found
    negative = np.zeros((n, depth), dtype=bool)
    negative.ravel()[run_row * depth + pos] = grades < 0
    return gains, retrieved, judged, negative, np.bincount(run_row, minlength=n).astype(np.int64)


def condensed(qrels: Qrels, run: Run, run_query: np.ndarray) -> Run:
    """``run`` without the documents its queries have no judgment for (trec_eval ``-J``), ranks closed up."""
    grades, found = _grades(qrels, run_query[run.query_index], lookup(run.docs, qrels.docs)[run.doc_index])
    found &= grades >= 0  # a negative grade is trec_eval's "not in the pool": unjudged
    if found.all():
        return run
    return Run.from_codes(run.queries, run.docs, run.query_index[found], run.doc_index[found], run.scores[found])


def evaluated_queries(qrels: Qrels, run_query: np.ndarray, rules: QueryRules) -> tuple[np.ndarray, np.ndarray]:
    """Codes of the qrels queries ``rules`` score, and every qrels query's number of relevant documents.

    ``run_query``: the qrels code of each run query (-1 when not judged).
    """
    n_rel = np.bincount(qrels.query_index, weights=qrels.grades >= rules.relevance_level,
                        minlength=len(qrels.queries)).astype(np.int64)
    keep = np.ones(len(qrels.queries), dtype=bool)
    if not rules.no_relevant:
        keep &= n_rel > 0
    if not rules.unretrieved:
        in_run = np.zeros(len(qrels.queries), dtype=bool)
        in_run[run_query[run_query >= 0]] = True
        keep &= in_run
    return np.flatnonzero(keep), n_rel


def build_ranking(
    qrels: Qrels, run: Run, depth: int | None, ideal_depth: int | None, rules: QueryRules | None = None
) -> tuple[np.ndarray, np.ndarray, Ranking]:
    """Join ``run`` to ``qrels`` for the queries ``rules`` score.

    Args:
        qrels: the judgments.
        run: the ranked run; queries it has but ``qrels`` lacks are ignored.
        depth: ranks to keep (None: the longest ranking).
        ideal_depth: ideal grades to keep per query (None: all).
        rules: which queries count, ranks per query, relevance level
            (default: searchtrace's, see :class:`QueryRules`).

    Returns:
        Evaluated query ids (qrels order), whether the run retrieved anything
        for each, and the :class:`Ranking`.
    """
    rules = rules or QueryRules()
    if rules.max_docs is not None:
        depth = rules.max_docs if depth is None else min(depth, rules.max_docs)
    run_query = lookup(run.queries, qrels.queries)
    if rules.judged_only:
        run = condensed(qrels, run, run_query)
    evaluated, n_rel_all = evaluated_queries(qrels, run_query, rules)
    # One extra slot so that code -1 (a run query not in the qrels) maps to row -1.
    row_of_query = np.full(len(qrels.queries) + 1, -1, dtype=np.int64)
    row_of_query[evaluated] = np.arange(len(evaluated))
    n = len(evaluated)

    gains, retrieved, judged, negative, length = _gains(qrels, run, run_query, row_of_query, n, depth)
    n_rel = n_rel_all[evaluated]
    nonrel = (qrels.grades >= 0) & (qrels.grades < rules.relevance_level)
    n_nonrel = np.bincount(qrels.query_index, weights=nonrel, minlength=len(qrels.queries))[evaluated]
    n_graded = np.bincount(qrels.query_index, weights=qrels.grades > 0, minlength=len(qrels.queries))[evaluated]
    most = int(n_graded.max()) if n else 0
    ideal = _ideal(qrels, row_of_query, n, most if ideal_depth is None else min(ideal_depth, most))
    top = max(rules.top_grade or 0, int(qrels.grades.max()) if len(qrels.grades) else 0, rules.relevance_level)
    return qrels.queries[evaluated], retrieved, Ranking(gains, ideal, n_rel, rules.relevance_level, judged, length,
                                                        n_nonrel.astype(np.int64), negative, top)
