"""Executing an eval: a dataset split through the retriever, into a run folder.

:func:`run_eval` (:mod:`~searchtrace.evals.runs.execution.orchestrate`) opens the
retriever and the tracer, chooses or resumes the run folder, and writes the
scored summary at the end; :mod:`~searchtrace.evals.runs.execution.loop` searches
the split's queries in batches, journaling each once its traces are stored.
"""

from searchtrace.evals.runs.execution.orchestrate import EvalInterrupted, run_eval

__all__ = ["EvalInterrupted", "run_eval"]
