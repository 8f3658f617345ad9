"""One sentence for every figure a dashboard page shows, for Streamlit's ``help=`` marks.

A number a person cannot read is a number they cannot trust: each metric family
(``ndcg@10`` and ``ndcg@100`` share one sentence, its cutoff filled in), each
statistic of the Compare page, each calibration figure and each latency
percentile is explained once, here, so every page says the same thing. No
Streamlit import: the data modules' tests and other pages' helpers read it too.
"""

from __future__ import annotations

import re

__all__ = ["FIGURES", "METRICS", "explain", "legend"]

#: Metric families (``searchtrace.evals.MetricName`` values) to one sentence; ``{k}`` is the cutoff, ``{at}``
#: "in the top {k}" or "in the whole ranking" when there is none.
METRICS: dict[str, str] = {
    "ndcg": "Normalized discounted cumulative gain {at}: graded gains discounted by rank, 1 when the best "
            "documents come first in the best order.",
    "map": "Mean average precision {at}: precision at each relevant document's rank, averaged, so every "
           "relevant document found early counts.",
    "mrr": "Mean reciprocal rank {at}: 1 / the rank of the first relevant document (0 when none is found).",
    "recall": "Recall {at}: the share of a query's relevant documents that were retrieved.",
    "precision": "Precision {at} (P@k): the share of the retrieved documents that are relevant.",
    "hit": "Hit rate {at}: 1 when at least one relevant document was retrieved, else 0.",
    "rprec": "R-precision: precision in the top R, where R is the query's number of relevant documents.",
    "judged": "Judged {at}: the share of the retrieved documents that have a label at all; low means the "
              "other metrics rest on guesses.",
    "ndcg_min": "nDCG {at} if every unlabelled document were irrelevant: the lowest nDCG the missing labels "
                "allow.",
    "ndcg_max": "nDCG {at} if every unlabelled document were as relevant as the best grade: the highest nDCG "
                "the missing labels allow.",
    "bpref": "Binary preference: how often judged relevant documents rank above judged irrelevant ones, "
             "ignoring unlabelled ones.",
}

#: Every other figure the pages show, by the name a page looks it up with.
FIGURES: dict[str, str] = {
    "delta": "Candidate minus baseline, averaged over the paired queries (positive: the candidate scores higher).",
    "ci": "95% paired bootstrap confidence interval of the delta, for this metric alone (not adjusted for "
          "testing several metrics).",
    "p-value": "Chance of a delta at least this large if the two runs were equally good (paired randomization "
               "test, Holm-corrected across metrics); below 0.05 counts as significant.",
    "p t-test": "The paired t-test's p-value, Holm-corrected across metrics: a second opinion on the "
                "randomization test's.",
    "verdict": "better or worse: significant (p < 0.05, Holm) in that direction; not significant: the delta "
               "may be noise.",
    "wins/ties/losses": "Queries the candidate scored higher, the same (within 0.001) or lower than the "
                        "baseline.",
    "baseline": "What a run is measured against: the run of its dataset tagged baseline (eval --tag baseline), "
                "else the run just before it on its dataset.",
    "ece": "Expected calibration error: the gap between predicted relevance and the observed share of "
           "relevant results, averaged over bins (0 is perfectly calibrated).",
    "brier": "Brier score: mean squared error of predicted relevance against the 0/1 label (lower is better).",
    "auroc": "Area under the ROC curve: the chance a relevant result gets higher predicted relevance than an "
             "irrelevant one (0.5 is chance, 1 is perfect).",
    "aurc": "Area under the risk-coverage curve: the mean share of wrong answers as fewer queries are answered "
            "(lower is better).",
    "kendall tau": "Rank correlation between bestScore and nDCG@10 over queries: how well confidence orders "
                   "queries by quality (1 perfect, 0 none).",
    "rbo": "Rank-biased overlap: how much two rankings agree, weighting the top more (1 the same ranking, 0 "
           "nothing shared).",
    "jaccard": "Jaccard@k: documents both top-k lists share, over the documents either holds.",
    "relevance": "The calibrated probability that a result is relevant, from its scores.",
    "band": "Confidence band (high, medium, low) from the result's relevance.",
    "p50": "Median latency: half the requests were faster.",
    "p95": "95th percentile latency: 1 request in 20 was slower.",
    "p99": "99th percentile latency: 1 request in 100 was slower.",
}

_METRIC = re.compile(r"^([a-z_]+)(?:@(\d+))?$")


def explain(name: str) -> str | None:
    """The sentence for a metric (``ndcg@10``, ``MAP``, ``judged@20``) or figure (``ECE``, ``p95``); None for
    a name nothing here explains."""
    key = name.strip().lower()
    if key in FIGURES:
        return FIGURES[key]
    found = _METRIC.match(key)
    family = found.group(1) if found else None
    if found is None or family not in METRICS:
        return None
    k = found.group(2)
    return METRICS[family].format(k=k or "", at=f"in the top {k}" if k else "over the whole ranking")


def legend(names: list[str] | tuple[str, ...]) -> str:
    """Several sentences as one help text: ``name: sentence`` a line (names nothing explains left out)."""
    lines = [f"**{n}**: {text}" for n in names if (text := explain(n)) is not None]
    return "\n\n".join(lines)
