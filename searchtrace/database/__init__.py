"""The store a team shares, on PostgreSQL: its URL, connections and the runner of its versioned schema.

Part of the floor: it imports nothing of ours beyond the floor, and psycopg only
when a store is used. The trace store, the run index and the judgments store each
keep their PostgreSQL implementation in their own package, over :class:`Database`, and declare their
schema's :class:`Migration` beside it; the roof hands the list to :func:`migrate`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchtrace._lazy import exports

if TYPE_CHECKING:
    from searchtrace.database.migrations import (
        SCHEMA_VERSION,
        Migration,
        StoreVersionError,
        check_version,
        migrate,
        store_version,
    )
    from searchtrace.database.pool import Database, database
    from searchtrace.database.url import StoreUrl, add_store_argument, resolve_store_url

__getattr__, __dir__, __all__ = exports(__name__, __file__)
