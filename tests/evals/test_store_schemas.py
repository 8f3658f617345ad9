"""The evals stores' schemas sit beside their stores and declare their step; the roof lists every step once."""

from __future__ import annotations

from searchtrace.cli import migrations
from searchtrace.database import SCHEMA_VERSION, Migration


def test_the_runs_and_judgments_steps_come_from_their_stores():
    from searchtrace.evals.labels.judgments.store.schema import JUDGMENTS_MIGRATION
    from searchtrace.evals.runs.store.schema import RUNS_MIGRATION

    steps = migrations()
    assert [m.version for m in steps] == list(range(1, SCHEMA_VERSION + 1))
    assert all(isinstance(m, Migration) for m in steps)
    assert steps[1] is RUNS_MIGRATION and "CREATE TABLE st_runs" in RUNS_MIGRATION.sql
    assert steps[2] is JUDGMENTS_MIGRATION and "CREATE TABLE st_judge_queue" in JUDGMENTS_MIGRATION.sql
