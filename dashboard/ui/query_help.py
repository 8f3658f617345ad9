"""One sentence for every figure the Query and Judge pages show, behind a help mark (``help=``).

Kept in one table so the wording is written once, checked once (every entry is
a single sentence), and can join the other pages' metric explanations later.
"""

from __future__ import annotations

__all__ = ["HELP", "help_for"]

HELP: dict[str, str] = {
    # the Query page
    "ndcg@10": "nDCG@10 weighs each gold document found in the top 10 by its grade and its rank, 1 being the "
               "ideal order.",
    "recall@100": "Recall@100 is the share of the query's gold documents ranked within the first 100.",
    "bestScore": "bestScore is the highest calibrated relevance among the results, from 0 to 1.",
    "noConfidentResults": "noConfidentResults is true when no result reached the low band's threshold.",
    "rank": "The result's position in the ranking, 1 being the top.",
    "gold": "The document's gold grade, one star per grade point; empty when it is not judged relevant.",
    "relevance": "The calibrated relevance, shown as a running minimum down the ranking, so a result never shows "
                 "more than the one above it.",
    "band": "The confidence band the relevance falls in: high, medium or low.",
    "bands": "The confidence band of each result, in rank order, as coloured chips (green high, amber medium, "
             "red low).",
    "moved": "The document's rank in the other run: ▲ it moved up from baseline to candidate, ▼ down.",
    "funnel": "How many candidates each stage produced and how many of the gold documents it held.",
    "stage_rank": "The document's rank in this stage's list as the trace recorded it: — not in the list, "
                  "> N beyond the N candidates recorded.",
    "shape": "The document's position among the results the search returned, relation hits included; — not "
             "returned.",
    "final_rank": "The document's rank in the run's final ranking, empty when it is beyond the run's depth.",
    "lost_stage": "The stage that pushed the document below the cut the run counts as found, or that never "
                  "returned it.",
    "where": "Where the gold document went, in words: found, or the stage that lost it and its ranks before "
             "and after.",
    "gold_moves": "Each gold document's final rank in the baseline and the candidate, and how far it moved.",
    "across": "The query's figures in every run that has it, newest first, with its nDCG@10 run by run below.",
    "gold_across": "Each gold document's final rank in each run picked; empty when the run did not rank it.",
    # the Judge page
    "pairs_done": "Pairs done in the pool: a pair is done when you judged it or enough judges did.",
    "query_done": "Pairs of the query shown that are done.",
    "judges_per_pair": "How many judges each pair is handed to; 2 or more measure their agreement.",
    "grades": "The grades each judge gave the pair, judge by judge.",
    "adjudicated": "The grade an adjudication settled on, empty while the pair is still disputed.",
}


def help_for(key: str) -> str:
    """The sentence for ``key`` (a figure's name on the page); a missing one is a bug, so it raises KeyError."""
    return HELP[key]
