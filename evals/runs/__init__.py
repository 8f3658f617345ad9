"""Runs: producing a run and keeping it.

``trec/`` (TREC files), ``runfolder/`` (the run-folder format: one module owns ``run.json``),
``naming`` (a run's name, id and settings label), ``target`` (any retriever as an eval target),
``analysis`` (a run's outcomes turned into its scores and the analysis sections of ``run.json``),
``execution/`` (executing an eval: the journaled loop, corrective retries), ``external`` (a TREC
run file as a run), ``calibration`` (fitting the relevance model), ``store/`` (the runs store: the run index, its
protocol, backends and factory), ``runindex/`` (the index at work: the cache, resolving a run, publishing, the
``runs`` commands).
"""
