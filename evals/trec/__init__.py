"""TREC run and qrels files: read into :class:`~searchtrace.evals.rankings.Run` / ``Qrels``, and write runs.

:mod:`~searchtrace.evals.trec.files` reads and writes the files, line by line;
a large well-formed file is read by :mod:`~searchtrace.evals.trec.columns`
instead (numpy over the file's bytes: fields found by
:mod:`~searchtrace.evals.trec.tokens`, numbers parsed by
:mod:`~searchtrace.evals.trec.numbers`, ids interned by
:mod:`searchtrace.evals.interning`), and re-read line by line when it cannot
vouch for the input, so every malformed line is named the same way.
"""

from searchtrace.evals.trec.files import qrels_lines, read_qrels, read_run, write_run

__all__ = ["qrels_lines", "read_qrels", "read_run", "write_run"]
