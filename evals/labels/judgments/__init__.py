"""Judgments: gold labels for a dataset of one's own, kept beside it.

A judgment labels a (query id, doc id) pair, never a rank or a span, so a
label given on one configuration's ranking counts for every other. Modules:
``records`` (the :class:`Judgment` record and its JSON line), ``store/`` (the
store protocol, ``jsonl``: ``judgments.jsonl`` appended under ``flock``, and
``postgres``: ``st_judgments`` in the store a team shares), ``scale``
(``judging.toml``), ``labels`` (who stands by which grade, one grade per pair,
adjudications), ``tally`` (the standing labels kept up to date by reading only
what was appended), ``agreement`` (between judges), ``queue/`` (who is judging
which pair: the protocol, ``local``: a SQLite file, ``postgres``: the shared
store's, ``FOR UPDATE SKIP LOCKED``), ``session`` (pairs handed out to
concurrent judges, judgments recorded), ``pool`` (the pairs to judge),
``folder`` (the files in a dataset folder), ``qrels_import`` and
``qrels_export`` (TREC and BEIR qrels in and out), ``status`` and ``text``
the ``judge`` commands are :mod:`searchtrace.evals.labels.cli`.

Names load their module on first use (``searchtrace --help`` registers the
``judge`` commands without numpy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchtrace._lazy import exports

if TYPE_CHECKING:
    from searchtrace.evals.labels.judgments.agreement import Agreement, measure_agreement
    from searchtrace.evals.labels.judgments.folder import JUDGMENTS_FILE, QUEUE_FILE, JudgingFolder
    from searchtrace.evals.labels.judgments.labels import (
        ADJUDICATION,
        PairLabels,
        adjudicates,
        majority,
        pair_labels,
        standing,
    )
    from searchtrace.evals.labels.judgments.pool import PooledPair, pairs_of, read_pool
    from searchtrace.evals.labels.judgments.qrels_export import Export, export_qrels
    from searchtrace.evals.labels.judgments.qrels_import import import_qrels
    from searchtrace.evals.labels.judgments.queue.postgres import PostgresJudgeQueue
    from searchtrace.evals.labels.judgments.queue.protocol import JudgeQueue
    from searchtrace.evals.labels.judgments.records import FORMAT_VERSION, Judgment, Kind, Pair
    from searchtrace.evals.labels.judgments.scale import DEFAULT_SCALE, SCALE_FILE, Scale
    from searchtrace.evals.labels.judgments.session import DEFAULT_TTL_S, JudgingSession
    from searchtrace.evals.labels.judgments.status import QueryStatus, Status, judging_status
    from searchtrace.evals.labels.judgments.store.jsonl import JsonlStore
    from searchtrace.evals.labels.judgments.store.postgres import PostgresJudgmentStore
    from searchtrace.evals.labels.judgments.store.protocol import Appended, JudgmentStore
    from searchtrace.evals.labels.judgments.tally import Tally

__getattr__, __dir__, __all__ = exports(__name__, __file__)
