"""Judgments: gold labels for a dataset of one's own, kept beside it.

A judgment labels a (query id, doc id) pair, never a rank or a span, so a
label given on one configuration's ranking counts for every other. Modules:
``records`` (the :class:`Judgment` record and its JSON line), ``store`` (the
store protocol), ``jsonl`` (``judgments.jsonl``, appended under ``flock``),
``postgres_store`` (``st_judgments`` in the store a team shares),
``scale`` (``judging.toml``), ``labels`` (who stands by which grade, one grade
per pair, adjudications), ``tally`` (the standing labels kept up to date by
reading only what was appended), ``agreement`` (between judges), ``holds`` (the
protocol of who is judging which pair), ``reservations`` (its SQLite file),
``postgres_queue`` (the shared store's judge queue, ``FOR UPDATE SKIP LOCKED``),
``session`` (pairs handed out to concurrent judges, judgments recorded), ``pool`` (the
pairs to judge), ``folder`` (the
files in a dataset folder), ``qrels_import`` and ``qrels_export`` (TREC and BEIR
qrels in and out), ``status``, ``text`` (both for a terminal) and ``cli``.
Implicit judgments from agents' fetches: ``clicks`` (fetches linked to the
searches they follow), ``coec`` (clicks over expected clicks by position),
``click_grades`` (the thresholds), ``reference`` (agreement with the human
labels or a qrels file), ``implicit`` (``judge implicit``, composed) and
``implicit_text``.

Names load their module on first use (``searchtrace --help`` registers the
``judge`` commands without numpy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchtrace._lazy import exports

if TYPE_CHECKING:
    from searchtrace.evals.judgments.agreement import Agreement, measure_agreement
    from searchtrace.evals.judgments.click_grades import ClickThresholds
    from searchtrace.evals.judgments.folder import JUDGMENTS_FILE, RESERVATIONS_FILE, JudgingFolder
    from searchtrace.evals.judgments.holds import Holds
    from searchtrace.evals.judgments.implicit import IMPLICIT_JUDGE, ImplicitPair, ImplicitReport, implicit_judgments
    from searchtrace.evals.judgments.jsonl import JsonlStore
    from searchtrace.evals.judgments.labels import (
        ADJUDICATION,
        PairLabels,
        adjudicates,
        majority,
        pair_labels,
        standing,
    )
    from searchtrace.evals.judgments.pool import PooledPair, pairs_of, read_pool
    from searchtrace.evals.judgments.postgres_queue import PostgresReservations
    from searchtrace.evals.judgments.postgres_store import PostgresJudgmentStore
    from searchtrace.evals.judgments.qrels_export import Export, export_qrels
    from searchtrace.evals.judgments.qrels_import import import_qrels
    from searchtrace.evals.judgments.records import FORMAT_VERSION, Judgment, Kind, Pair
    from searchtrace.evals.judgments.reference import ReferenceAgreement
    from searchtrace.evals.judgments.scale import DEFAULT_SCALE, SCALE_FILE, Scale
    from searchtrace.evals.judgments.session import DEFAULT_TTL_S, JudgingSession
    from searchtrace.evals.judgments.status import QueryStatus, Status, judging_status
    from searchtrace.evals.judgments.store import Appended, JudgmentStore
    from searchtrace.evals.judgments.tally import Tally

__getattr__, __dir__, __all__ = exports(__name__, __file__)
