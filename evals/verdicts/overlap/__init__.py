"""Label-free comparison: two runs' rankings compared query by query, no labels needed.

The mathematics is :mod:`searchtrace.evals.scoring.overlap` (shared prefixes,
rank-biased overlap, Jaccard@k). Here: ``sides`` reads what a run folder gives;
``pairs`` lines two runs' rankings up over one vocabulary; ``weights`` weighs
queries drawn from traffic; ``result`` holds a comparison; ``compare`` makes one
(:func:`compare_overlap`); ``text`` renders it for a terminal or Markdown;
``cli`` is ``searchtrace compare`` without labels. Names load their module on
first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchtrace._lazy import exports

if TYPE_CHECKING:
    from searchtrace.evals.scoring.overlap.rank_biased import RBO, rbo, top_weight
    from searchtrace.evals.scoring.overlap.topk import jaccard, new_in_top
    from searchtrace.evals.verdicts.overlap.compare import DEFAULT_K, DEFAULT_PS, compare_overlap
    from searchtrace.evals.verdicts.overlap.result import BandChanges, Means, OverlapComparison, QueryOverlap
    from searchtrace.evals.verdicts.overlap.text import TRACE_COMMAND, to_lines, to_markdown

__getattr__, __dir__, __all__ = exports(__name__, __file__)
