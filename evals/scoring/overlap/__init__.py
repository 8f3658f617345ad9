"""The overlap mathematics: ``prefixes`` counts what two rankings' prefixes share at every depth
(ties as Webber et al. 2010 define them); ``rank_biased`` is rank-biased overlap from those counts
(the extrapolated estimate, its lower bound and residual; one pair, or many as arrays); ``topk`` is
Jaccard@k and the documents new in the top k. Names load their module on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchtrace._lazy import exports

if TYPE_CHECKING:
    from searchtrace.evals.scoring.overlap.rank_biased import RBO, rbo, top_weight
    from searchtrace.evals.scoring.overlap.topk import jaccard, new_in_top

__getattr__, __dir__, __all__ = exports(__name__, __file__)
