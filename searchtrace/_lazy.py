"""Lazy package exports (PEP 562): a package's names load their module on first use.

``import searchtrace.evals`` then costs nothing until a name is used, which keeps
``searchtrace --help`` free of numpy, pandas and the OpenTelemetry SDK. Each
package also imports its names under ``TYPE_CHECKING`` so type checkers see
them; ``tests/test_architecture.py`` checks that both lists agree.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["exports"]


def exports(package: str, names: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``names`` maps each exported name to its module.

    A submodule that is part of the API (``searchtrace.traces.vocabulary``) needs
    no entry: ``from package import submodule`` imports it. An exported name must
    not be a submodule's name, which the import system would shadow.
    """

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__
