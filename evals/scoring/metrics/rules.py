"""Which queries a score is averaged over, how deep, and what counts as relevant.

searchtrace's default and trec_eval's differ on two kinds of query:

=========================  ==========  =========  ===============  ============
query                      searchtrace trec_eval  trec_eval ``-c`` pytrec_eval
=========================  ==========  =========  ===============  ============
judged, no relevant doc    left out    scores 0   scores 0         scores 0
judged, not in the run     scores 0    left out   scores 0         left out
in the run, not judged     left out    left out   left out         left out
=========================  ==========  =========  ===============  ============

The default leaves out queries no system can score on (a mean over them only
shrinks towards 0 by how many the qrels happen to list) and counts a query
the system did not answer as a failure (leaving it out would reward a run
for skipping hard queries). ``QueryRules.trec_eval()`` reproduces trec_eval.
"""

from __future__ import annotations

from dataclasses import dataclass

from searchtrace.errors import ValidationError

__all__ = ["QueryRules"]


@dataclass(frozen=True)
class QueryRules:
    """The query rules of one evaluation.

    Attributes:
        no_relevant: judged queries without a relevant document score 0
            (else they are left out).
        unretrieved: judged queries the run has no result for score 0 (else
            they are left out); trec_eval's ``-c``.
        max_docs: ranks scored per query (trec_eval ``-M``); None: all.
        relevance_level: the lowest relevant grade (trec_eval ``-l``).
        judged_only: score condensed lists, each query's unjudged documents removed before ranking
            (trec_eval ``-J``): nDCG', AP' of Sakai's condensed-list measures.
        top_grade: the grading scale's top grade, the greatest an unjudged document could be given (nDCG's
            bounds, ``ndcg_min@k`` and ``ndcg_max@k``); None: the qrels' highest grade (at least
            ``relevance_level``), or this when the qrels grade lower.
    """

    no_relevant: bool = False
    unretrieved: bool = True
    max_docs: int | None = None
    relevance_level: int = 1
    judged_only: bool = False
    top_grade: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_docs", "relevance_level", "top_grade"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValidationError(f"{name} must be a positive integer, got {value!r}", field=name)

    @classmethod
    def trec_eval(cls, *, complete: bool = False, max_docs: int | None = None,
                  relevance_level: int = 1, judged_only: bool = False) -> QueryRules:
        """trec_eval's rules; ``complete`` is its ``-c``, ``judged_only`` its ``-J``."""
        return cls(no_relevant=True, unretrieved=complete, max_docs=max_docs, relevance_level=relevance_level,
                   judged_only=judged_only)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"no_relevant": self.no_relevant, "unretrieved": self.unretrieved,
                                  "max_docs": self.max_docs, "relevance_level": self.relevance_level}
        if self.judged_only:  # written only when set: older run folders' rules read the same
            out["judged_only"] = True
        if self.top_grade is not None:
            out["top_grade"] = self.top_grade
        return out
