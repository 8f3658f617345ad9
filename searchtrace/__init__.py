"""searchtrace: an evaluation and tracing harness around a hybrid, graph-aware retriever.

The installed distribution is this one import package. Its subpackages:

* :mod:`searchtrace.retriever`: the staged retriever (dense, BM25, knowledge graph).
* :mod:`searchtrace.traces`: every search stage as an OpenTelemetry span, stored and exported.
* :mod:`searchtrace.evals`: metrics against gold labels, comparison, the CI gate.
* :mod:`searchtrace.dashboard`: the Streamlit app over runs and traces.

The modules beside them are the floor every subpackage stands on and imports
nothing of ours: :mod:`searchtrace.errors` (the error family and exit codes),
:mod:`searchtrace.names` (stages, modes, bands), :mod:`searchtrace.home` (the
home folder's layout) and :mod:`searchtrace.environment` (the environment
variables read). :mod:`searchtrace.cli` is the roof: the command line, which
assembles each subpackage's commands and is imported by none of them.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
