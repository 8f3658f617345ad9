"""The Judge page's data: the datasets to judge, a pool as a queue, progress, the pair shown, disagreements.

What a judge is shown is blind: a pair's query text, the document's title, text
and metadata, never a score, rank, band or the system that found it (the pool's
sources stay in ``pool.jsonl``). The query's metadata is not shown either: a
dataset's may name its answer or its gold documents. Judgments go through a
:class:`searchtrace.evals.JudgingSession`, one append per click.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from searchtrace.dashboard.data.documents import documents, metadata, query_texts
from searchtrace.dashboard.data.runs import all_runs
from searchtrace.errors import SearchtraceError
from searchtrace.evals import JudgingFolder, PairLabels, Tally, adjudicates, read_info, read_pool
from searchtrace.home import Home

__all__ = ["DISAGREEMENT_COLUMNS", "PairView", "Progress", "Queue", "dataset_folders", "dataset_label", "disagreements",
           "highlight", "pair_view", "progress", "queue"]

Pair = tuple[str, str]
DISAGREEMENT_COLUMNS = ("query_id", "query", "doc_id", "title", "grades", "notes", "adjudicated")
_WORD = re.compile(r"[^\W_]+")
#: Words of a query not worth highlighting in a document (display only: the retriever's analysers keep their own).
_COMMON = frozenset("""a an and are as at be by did do does for from had has have how in into is it its of on or
that the their there these this those to was were what when where which who whom whose why will with""".split())


def dataset_folders(home: str | Path) -> list[str]:
    """The dataset folders to judge, sorted: those the home's runs scored that still exist, and every folder
    with a pool found in the home or beside one of them.

    Runs alone miss a query set made from traffic (``queries from-traces``): its folder is wherever it was
    written, and no run of this home need have scored it (its runs may live in another home, or its pool
    came from elsewhere). Such a set is usually written in the home or beside the dataset it was drawn from,
    so those folders' subfolders holding a ``pool.jsonl`` are listed too.
    """
    scored = set()
    for folder in all_runs(home):
        try:
            path = folder.summary().dataset.path
        except (SearchtraceError, OSError):
            continue
        if path and Path(path).is_dir():
            scored.add(Path(path).resolve())
    places = {Home.resolve(home).root, *(p.parent for p in scored)}
    pooled = {c.resolve() for place in places for c in _subfolders(place) if JudgingFolder(c).pool.is_file()}
    return sorted(str(p) for p in scored | pooled)


def _subfolders(place: Path) -> list[Path]:
    try:
        return [c for c in place.iterdir() if c.is_dir()]
    except OSError:  # a folder gone or unreadable: nothing found in it
        return []


def dataset_label(folder: str) -> str:
    """A dataset folder as the picker lists it: its path, marked when it is a query set from traffic and
    when it has no pool yet."""
    path = Path(folder)
    marks = []
    try:
        read_info(path)
        marks.append("queries from traffic")
    except (SearchtraceError, OSError, ValueError, KeyError, TypeError):  # no query set, or not one read
        pass
    if not JudgingFolder(path).pool.is_file():
        marks.append("no pool yet")
    return f"{folder}  ({', '.join(marks)})" if marks else folder


@dataclass(frozen=True)
class Queue:
    """A pool in the order a judge is shown it: the queries, and each query's pairs."""

    queries: tuple[str, ...]
    pairs: Mapping[str, tuple[Pair, ...]]

    @property
    def size(self) -> int:
        return sum(len(p) for p in self.pairs.values())

    def candidates(self, query_id: str | None, skipped: Sequence[Pair] = (), first: Pair | None = None) -> list[Pair]:
        """The pairs to hand out next: ``query_id``'s (None: every query's), ``first`` ahead, ``skipped`` left out."""
        pairs = self.pairs.get(query_id, ()) if query_id is not None else [p for q in self.queries
                                                                          for p in self.pairs[q]]
        left_out = set(skipped)
        out = [p for p in pairs if p not in left_out]
        if first is not None and first in out:
            out.remove(first)
            out.insert(0, first)
        return out


@functools.lru_cache(maxsize=8)
def _queue(path: str, mtime_ns: int, size: int) -> Queue:
    by_query: dict[str, list[Pair]] = {}
    for p in read_pool(JudgingFolder(Path(path).parent)):
        by_query.setdefault(p.query_id, []).append((p.query_id, p.doc_id))
    return Queue(tuple(by_query), {q: tuple(pairs) for q, pairs in by_query.items()})


def queue(dataset: str | Path) -> Queue:
    """The pool of the dataset folder as a queue (read again when ``pool.jsonl`` changes).

    Raises:
        NotFoundError: no dataset folder, or no pool in it (the message says how to make one).
        DataError: a damaged pool line.
    """
    folder = JudgingFolder.at(dataset)
    if not folder.pool.is_file():
        read_pool(folder)  # raises the pool's own "no pool" error
    stat = folder.pool.stat()
    return _queue(str(folder.pool.resolve()), stat.st_mtime_ns, stat.st_size)


@dataclass(frozen=True)
class Progress:
    """How far a judge has got: pairs done in the query shown and in the pool, and by this judge."""

    query_done: int
    query_total: int
    done: int
    total: int
    queries_done: int
    queries: int
    mine: int


def progress(tally: Tally, pool: Queue, judge: str, per_pair: int, query_id: str | None) -> Progress:
    """``judge``'s progress: a pair is done when they judged it or ``per_pair`` judges have (as of ``tally``)."""
    pairs = [p for q in pool.queries for p in pool.pairs[q]]
    done = dict(zip(pairs, tally.settled(pairs, judge, per_pair)))
    by_query = {q: sum(done[p] for p in pool.pairs[q]) for q in pool.queries}
    shown = len(pool.pairs.get(query_id, ())) if query_id else 0
    return Progress(by_query.get(query_id, 0) if query_id else 0, shown, sum(by_query.values()), len(pairs),
                    sum(by_query[q] == len(pool.pairs[q]) for q in pool.queries), len(pool.queries),
                    sum(tally.labelled_by(pairs, judge)))


def highlight(text: str, query: str) -> tuple[tuple[str, bool], ...]:
    """``text`` cut into (piece, is a query term) runs, joined back equal to ``text``.

    A word is a query term when it equals one of the query's words (case folded,
    common words left out), or when both have 4 letters or more and one begins
    the other (``heron`` and ``herons``).
    """
    terms = {w.casefold() for w in _WORD.findall(query)} - _COMMON
    pieces: list[tuple[str, bool]] = []
    last = 0
    for match in _WORD.finditer(text):
        if _is_term(match.group().casefold(), terms):
            pieces += [(text[last:match.start()], False)] if match.start() > last else []
            pieces.append((match.group(), True))
            last = match.end()
    return tuple(pieces + ([(text[last:], False)] if last < len(text) else []))


def _is_term(word: str, terms: set[str]) -> bool:
    if word in terms:
        return True
    return len(word) >= 4 and any(len(t) >= 4 and (word.startswith(t) or t.startswith(word)) for t in terms)


@dataclass(frozen=True)
class PairView:
    """What a judge sees of a pair: the query's text, the document's title, text (highlighted) and metadata."""

    query_id: str
    doc_id: str
    query: str
    title: str
    text: tuple[tuple[str, bool], ...]
    metadata: tuple[tuple[str, str], ...]
    found: bool


def pair_view(dataset: str | Path, pair: Pair, query: str | None = None) -> PairView:
    """The pair as a judge sees it (``query``: its text when the dataset's queries lack it, as traffic's do)."""
    query_id, doc_id = pair
    text = query_texts(str(dataset)).get(query_id) or query or ""
    title, body = documents(str(dataset)).get(doc_id, ("", ""))
    found = doc_id in documents(str(dataset))
    return PairView(query_id, doc_id, text, title, highlight(body, text), metadata(str(dataset)).get(doc_id, ()), found)


def _row(labels: PairLabels, tally: Tally, queries: Mapping[str, str], docs: Mapping[str, tuple[str, str]]) -> dict:
    judgments = [tally.label(labels.pair, judge) for judge, _ in labels.grades]
    settled = [j for j in judgments if j is not None and adjudicates(j)]
    notes = " · ".join(f"{j.judge}: {j.note}" for j in judgments if j is not None and j.note)
    query_id, doc_id = labels.pair
    return {"query_id": query_id, "query": queries.get(query_id, ""), "doc_id": doc_id,
            "title": docs.get(doc_id, ("", ""))[0], "grades": " · ".join(f"{j} {g}" for j, g in labels.grades),
            "notes": notes, "adjudicated": settled[-1].grade if settled else None}


def disagreements(tally: Tally, dataset: str | Path, pending_only: bool = False) -> pd.DataFrame:
    """The pairs whose judges' grades differ (human labels, as of ``tally``): :data:`DISAGREEMENT_COLUMNS`.

    ``grades`` and ``notes`` list each judge's; ``adjudicated`` is the grade of an
    adjudication among them, else empty; ``pending_only`` leaves out adjudicated pairs.
    """
    queries, docs = query_texts(str(dataset)), documents(str(dataset))
    rows = [_row(p, tally, queries, docs) for p in tally.shared() if p.disputed]
    frame = pd.DataFrame(rows, columns=list(DISAGREEMENT_COLUMNS))
    frame["adjudicated"] = frame["adjudicated"].astype("Int64")
    return frame[frame["adjudicated"].isna()].reset_index(drop=True) if pending_only else frame
