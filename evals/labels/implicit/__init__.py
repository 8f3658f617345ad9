"""Implicit judgments from agents' fetches (``judge implicit``).

``clicks`` (fetches linked to the searches they follow), ``coec`` (clicks over expected clicks by
position), ``click_grades`` (the thresholds), ``reference`` (agreement with the human labels or a
qrels file), ``judge`` (``judge implicit``, composed) and ``text`` (its report for a terminal).
Names load their module on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchtrace._lazy import exports

if TYPE_CHECKING:
    from searchtrace.evals.labels.implicit.click_grades import ClickThresholds
    from searchtrace.evals.labels.implicit.judge import IMPLICIT_JUDGE, ImplicitPair, ImplicitReport, implicit_judgments
    from searchtrace.evals.labels.implicit.reference import ReferenceAgreement

__getattr__, __dir__, __all__ = exports(__name__, __file__)
