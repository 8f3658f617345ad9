"""searchtrace dashboard: a Streamlit app over the run folders and the trace store of a home.

:mod:`dashboard.data` holds the data access (no Streamlit), :mod:`dashboard.ui`
the cached wrappers and charts, ``views/`` the page scripts, ``app.py`` the
entry point, :mod:`dashboard.door` Streamlit's server behind the Host
check and the API key, and :mod:`dashboard.cli` the ``searchtrace dashboard`` command.
"""

__all__: list[str] = []
