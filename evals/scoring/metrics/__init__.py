"""Retrieval metrics over a run and qrels, following trec_eval.

Conventions (each pinned by a test in ``tests/test_metrics.py``):

* Ranking: documents sorted by score descending, ties broken by document id
  descending (trec_eval sorts by score, then docno, both descending); the
  run's rank column is ignored.
* Relevance: a grade > 0 is relevant; a grade <= 0 or an unjudged document
  counts as non-relevant.
* nDCG: gain = grade (linear, as trec_eval's ``ndcg``), discount
  ``log2(rank + 1)``; the ideal DCG ranks all the query's judged relevant
  documents by grade, retrieved or not, cut at the same ``k``.
* MAP and recall divide by all relevant documents of the query; P@k divides
  by ``k`` (missing ranks count as non-relevant); ``mrr@k`` is the reciprocal
  rank cut at ``k`` (0 past it); ``hit@k`` is trec_eval's ``success_k``;
  ``rprec`` is precision at rank R = number of relevant documents.
* Queries (the default :class:`QueryRules`): every qrels query with a relevant
  document is evaluated; one the run has no results for scores 0 (trec_eval
  ``-c``). Queries without a relevant document are excluded from per-query
  values and means; run queries absent from the qrels are ignored.
  ``QueryRules.trec_eval()`` follows trec_eval instead (see :mod:`.rules`).
* Coverage: ``judged@k`` is the share of the top ``k`` with a judgment (any
  grade; ir_measures' ``Judged@k``: over the ranking's length when shorter);
  ``bpref`` is trec_eval's; ``QueryRules(judged_only=True)`` scores condensed
  lists (trec_eval ``-J``: unjudged documents, and those graded below 0,
  removed before ranking). Each eval records ``judged@k`` for its cutoffs.
"""

from searchtrace.evals.scoring.metrics.evaluate import Evaluation, evaluate
from searchtrace.evals.scoring.metrics.metric import (
    COVERAGE_K,
    DEFAULT_METRICS,
    REGISTRY,
    Cutoff,
    Metric,
    MetricName,
    MetricSpec,
    coverage_metrics,
    is_coverage,
    parse_metrics,
)
from searchtrace.evals.scoring.metrics.ranking import Ranking, build_ranking
from searchtrace.evals.scoring.metrics.rules import QueryRules

__all__ = [
    "COVERAGE_K",
    "DEFAULT_METRICS",
    "REGISTRY",
    "Cutoff",
    "Evaluation",
    "Metric",
    "MetricName",
    "MetricSpec",
    "QueryRules",
    "Ranking",
    "build_ranking",
    "coverage_metrics",
    "evaluate",
    "is_coverage",
    "parse_metrics",
]
