"""Which judge queue a dataset's judging uses: the shared store's when a URL is given, else the file beside it.

The one place outside the backends that names them: every caller gets a :class:`JudgeQueue`, opened over the
judgments store it records into.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from searchtrace.evals.labels.judgments.queue.protocol import JudgeQueue
from searchtrace.evals.labels.judgments.store.opening import open_judgment_store

if TYPE_CHECKING:
    from searchtrace.database import StoreUrl

__all__ = ["open_judge_queue"]


def open_judge_queue(file: Path, judgments: Path, shared: StoreUrl | None, dataset: str,
                     clock: Callable[[], float] = time.time) -> JudgeQueue:
    """``dataset``'s judge queue in ``shared``, else in the SQLite ``file`` recording into the JSONL ``judgments``
    (``clock``: the file's clock; the shared store keeps the server's).

    Raises:
        StoreVersionError, BackendUnavailable: a shared store this client cannot use.
    """
    if shared is None:
        from searchtrace.evals.labels.judgments.queue.local import LocalJudgeQueue

        return LocalJudgeQueue(file, open_judgment_store(judgments, None, dataset), clock)
    from searchtrace.evals.labels.judgments.queue.postgres import PostgresJudgeQueue
    from searchtrace.evals.labels.judgments.store.postgres import PostgresJudgmentStore

    return PostgresJudgeQueue(PostgresJudgmentStore.open(shared, dataset))
