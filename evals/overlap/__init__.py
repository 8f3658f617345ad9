"""Label-free comparison: two runs' rankings compared query by query, no labels needed.

``prefixes`` counts what two rankings' prefixes share at every depth (ties as
Webber et al. 2010 define them); ``rank_biased`` is rank-biased overlap from those
counts (the extrapolated estimate, its lower bound and residual; one pair, or
many as arrays); ``topk`` is Jaccard@k and the documents new in the top k;
``sides`` reads what a run folder gives; ``pairs`` lines two runs' rankings up
over one vocabulary; ``weights`` weighs queries drawn from traffic; ``result``
holds a comparison; ``compare`` makes one (:func:`compare_overlap`); ``text``
renders it for a terminal or Markdown; ``cli`` is ``searchtrace compare``
without labels. Names load their module on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchtrace._lazy import exports

if TYPE_CHECKING:
    from searchtrace.evals.overlap.compare import DEFAULT_K, DEFAULT_PS, compare_overlap
    from searchtrace.evals.overlap.rank_biased import RBO, rbo, top_weight
    from searchtrace.evals.overlap.result import BandChanges, Means, OverlapComparison, QueryOverlap
    from searchtrace.evals.overlap.text import TRACE_COMMAND, to_lines, to_markdown
    from searchtrace.evals.overlap.topk import jaccard, new_in_top

__getattr__, __dir__, __all__ = exports(__name__, __file__)
