"""The Streamlit side of the dashboard: cached data access, charts and page helpers."""

__all__: list[str] = []
