"""searchtrace dashboard (see its issue)."""

__all__: list[str] = []
