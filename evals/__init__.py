"""searchtrace evals (see its issue)."""

__all__: list[str] = []
