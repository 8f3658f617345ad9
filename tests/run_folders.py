"""Small completed run folders for the run index's tests: external runs (``eval --run --out``) re-labelled.

Scores are chosen to catch any float that does not travel bit for bit: a sum
that is not its decimal, the smallest subnormal, numbers near the largest,
negative zero beside zero, and ties broken by document id.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from searchtrace.cli import main
from searchtrace.evals import RunFolder

QRELS = "".join(f"q{i} 0 d{i}a 2\nq{i} 0 d{i}b 1\nq{i} 0 d{i}c 0\n" for i in range(6))
AWKWARD = [0.1 + 0.2, 5e-324, -1.7976931348623157e308, 1.0000000000000002, 0.0, -0.0, 2.5, 2.5]


def scores(seed: int) -> list[float]:
    return [AWKWARD[(seed + i) % len(AWKWARD)] for i in range(len(AWKWARD))]


def trec_text(seed: int) -> str:
    lines = []
    for q in range(6):
        docs = [f"d{q}a", f"d{q}b", f"d{q}x{seed}", f"d{q}c", f"d{q}y", f"d{q}z"]
        for rank, (doc, score) in enumerate(zip(docs, scores(seed + q)), 1):
            lines.append(f"q{q} Q0 {doc} {rank} {score!r} tag{seed}\n")
    return "".join(lines)


def make_run(root: Path, run_id: str, *, seed: int = 0, tags: tuple[str, ...] = (), name: str | None = None,
             created: datetime | None = None) -> RunFolder:
    """A completed run folder ``root/run_id`` scored on :data:`QRELS`, named, tagged and dated as asked."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "qrels.txt").write_text(QRELS)
    trec = root / f"{run_id}.input.trec"
    trec.write_text(trec_text(seed))
    out = root / run_id
    home = root / ".home"  # the home that lists it: a throwaway one, never the user's
    assert main(["eval", "--run", str(trec), "--qrels", str(root / "qrels.txt"), "--out", str(out),
                 "--home", str(home)]) == 0
    folder = RunFolder(out)
    when = created or datetime(2026, 1, 1, tzinfo=UTC)
    folder.write_summary(replace(folder.summary(), name=name, tags=tags, created_at=when))
    return folder


def with_journal(folder: RunFolder) -> RunFolder:
    """``folder`` with a journal of two readable records, recorded in its run.json."""
    from searchtrace.evals.runs.runfolder import QueryOutcome, RankedResult
    from searchtrace.names import Band
    from searchtrace.retriever import RetryHints

    def outcome(query_id: str) -> QueryOutcome:
        return QueryOutcome(query_id=query_id, category="", latency_ms={"total": 1.0}, ranking=(("d0a", 1.0),),
                            results=(RankedResult("d0a", 0.8, Band.HIGH, 1, {"rank": 1.0}),), best_score=0.8,
                            no_confident=False, bands=(Band.HIGH,), weak=False,
                            retry_hints=RetryHints((), (), "", ""), kg=(), rewrite_terms=(), degraded=(),
                            trace_id="ab" * 16, attribution=())

    summary = folder.summary()
    folder.append([outcome("q0"), outcome("q1")])
    folder.write_summary(summary)
    records = folder.records()
    assert not folder.journal.problems and len(records) == 2
    return folder


def run_trec(folder: Path) -> dict[str, list[str]]:
    """Each query's documents in a run folder's ``run.trec``, in rank order (read apart from the package's reader:
    the tests that use it check what the eval wrote)."""
    rows: dict[str, list[tuple[int, str]]] = {}
    for line in (folder / "run.trec").read_text().splitlines():
        qid, _, doc, rank, *_ = line.split()
        rows.setdefault(qid, []).append((int(rank), doc))
    return {q: [d for _, d in sorted(r)] for q, r in rows.items()}
