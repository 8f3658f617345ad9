"""The command line starts fast: heavy modules stay out of ``sys.modules`` on paths that do not use them.

Timings (CPU seconds with ``/usr/bin/time``) are in BENCHMARKS.md; this pins the
cause, which is machine-independent: what each path imports.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("pandas", "pyarrow", "torch", "sentence_transformers", "opentelemetry.sdk", "rich", "scipy", "sklearn",
         "streamlit", "httpx", "pydantic", "qdrant_edge", "neo4j", "tqdm")

PROBE = """
import json, sys
from searchtrace.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def loaded(*argv: str) -> tuple[int, set[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=60)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], set(report["modules"])


def heavy(modules: set[str], allowed: tuple[str, ...] = ()) -> list[str]:
    return sorted(m for m in modules for h in HEAVY if (m == h or m.startswith(h + ".")) and h not in allowed)


def test_help_imports_nothing_heavy():
    code, modules = loaded("--help")
    assert code == 0
    assert heavy(modules, ()) == [] and "numpy" not in modules and "logging" not in modules


@pytest.mark.parametrize("out", [False, True])
def test_eval_run_on_a_small_run_imports_only_numpy(tmp_path, out):
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d2 1\n")
    argv = ["eval", "--run", str(tmp_path / "run.trec"), "--qrels", str(tmp_path / "qrels.txt")]
    code, modules = loaded(*argv, *(["--out", str(tmp_path / "D")] if out else []))
    assert code == 0
    # writing the run folder's tables needs pyarrow (never pandas); printing the metrics needs neither
    assert heavy(modules, ("pyarrow",) if out else ()) == []
    assert "numpy" in modules


def test_eval_run_on_a_large_run_reads_it_without_pyarrow(tmp_path):
    lines = [f"q{i % 500} Q0 doc{i} {i} {1.0 / (i + 1)!r} tag\n" for i in range(30_000)]
    (tmp_path / "run.trec").write_text("".join(lines))
    assert (tmp_path / "run.trec").stat().st_size > 1 << 20  # the columnar reader's size
    (tmp_path / "qrels.txt").write_text("".join(f"q{i} 0 doc{i} 1\n" for i in range(500)))
    code, modules = loaded("eval", "--run", str(tmp_path / "run.trec"), "--qrels", str(tmp_path / "qrels.txt"))
    assert code == 0
    assert "searchtrace.evals.runs.trec.columns" in modules and heavy(modules) == []


def test_a_cli_search_on_the_sample_imports_neither_pydantic_nor_torch(sample_index_path, sample_config):
    """A warm CLI search: the request is validated in plain Python and the model runs on ONNX Runtime."""
    from pathlib import Path

    sample = Path(__file__).resolve().parents[2] / "datasets" / "sample"
    argv = ["search", "harbour master", "--dataset", str(sample), "--home", str(sample_config.home.root), "--json",
            "--no-progress", "--mode", "fast"]
    code, modules = loaded(*argv)
    assert code == 0
    # the search itself needs the SDK (its trace), qdrant_edge (the index) and rich is only for the table
    assert heavy(modules, ("opentelemetry.sdk", "qdrant_edge", "tqdm")) == []
