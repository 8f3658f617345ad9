"""Scoring: pure array code over rankings, no I/O.

``interning`` (ids to integer codes), ``rankings`` (the ranking arrays :class:`Run` and
:class:`Qrels`), ``metrics/`` (trec_eval-exact metrics), ``stats/`` (significance, agreement,
reliability, correlation), ``overlap/`` (the overlap mathematics: shared prefixes, rank-biased
overlap, Jaccard@k), ``attribution`` (where a gold document was found or lost), ``latency`` (stage
timings off the spans), ``fingerprints`` (content hashes of what a run scored).
"""
