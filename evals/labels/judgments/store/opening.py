"""Which judgments store a dataset's judging uses: the shared store when a URL is given, else the file beside it.

The one place outside the backends that names them: every caller gets a :class:`JudgmentStore`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from searchtrace.evals.labels.judgments.store.jsonl import JsonlStore
from searchtrace.evals.labels.judgments.store.protocol import JudgmentStore

if TYPE_CHECKING:
    from searchtrace.database import StoreUrl

__all__ = ["open_judgment_store"]


def open_judgment_store(file: Path, shared: StoreUrl | None, dataset: str) -> JudgmentStore:
    """``dataset``'s judgments in ``shared`` (its schema checked first), else in the JSONL ``file``.

    Raises:
        StoreVersionError, BackendUnavailable: a shared store this client cannot use.
    """
    if shared is None:
        return JsonlStore(file)
    from searchtrace.evals.labels.judgments.store.postgres import PostgresJudgmentStore

    return PostgresJudgmentStore.open(shared, dataset)
