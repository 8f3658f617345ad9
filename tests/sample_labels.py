"""The sample dataset's qrels, every split: the answers a simulated judge (or agent) gives in end-to-end tests."""

from __future__ import annotations

from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[1] / "datasets" / "sample"


def hidden_qrels() -> dict[str, dict[str, int]]:
    """Every split of the sample's qrels, by sample query id: grades by document id."""
    qrels: dict[str, dict[str, int]] = {}
    for split in sorted((SAMPLE / "qrels").glob("*.tsv")):
        for line in split.read_text(encoding="utf-8").splitlines()[1:]:
            q, d, g = line.split("\t")
            qrels.setdefault(q, {})[d] = int(g)
    return qrels
