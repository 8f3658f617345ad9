"""The trace store seam: what every backend does and the capabilities it declares (``protocol``), the one
opener (``opening.open_trace_store``), the records it returns and the filter it takes (``records``), the filter
compiled to SQL by one builder for either dialect (``filter_sql``), the home's SQLite file (``sqlite``,
``sqlite_sql``, ``writers``; ``damage``, ``readonly``, ``repair``) and the shared PostgreSQL store
(``postgres``, ``postgres_sql``, ``postgres_schema``).

Nothing outside this folder names a backend's class (``tests/test_architecture.py`` checks it)."""
