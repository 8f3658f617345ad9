"""Executing an eval: a dataset split through the retriever, into a run folder.

:func:`run_eval` (:mod:`~searchtrace.evals.execution.orchestrate`) opens the
retriever and the tracer, chooses or resumes the run folder, and writes the
scored summary at the end; :mod:`~searchtrace.evals.execution.search` searches
the split's queries in batches, journaling each once its traces are stored.
"""

from searchtrace.evals.execution.orchestrate import run_eval

__all__ = ["run_eval"]
