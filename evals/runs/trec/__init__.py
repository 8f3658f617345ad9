"""TREC run and qrels files: read into :class:`~searchtrace.evals.scoring.rankings.Run` / ``Qrels``, and write runs.

:mod:`~searchtrace.evals.runs.trec.files` reads and writes the files, line by line;
a large well-formed file is read by :mod:`~searchtrace.evals.runs.trec.columns`
instead (numpy over the file's bytes: fields found by
:mod:`~searchtrace.evals.runs.trec.tokens`, numbers parsed by
:mod:`~searchtrace.evals.runs.trec.numbers`, ids interned by
:mod:`searchtrace.evals.scoring.interning`), and re-read line by line when it cannot
vouch for the input, so every malformed line is named the same way.
"""

from searchtrace.evals.runs.trec.files import qrels_lines, read_qrels, read_run, write_run

__all__ = ["qrels_lines", "read_qrels", "read_run", "write_run"]
