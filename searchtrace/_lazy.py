"""Lazy package exports (PEP 562): a package's names load their module on first use.

``import searchtrace.evals`` then costs nothing until a name is used, which keeps
``searchtrace --help`` free of numpy, pandas and the OpenTelemetry SDK.

A package lists its API once, as the imports of its ``if TYPE_CHECKING:``
block: type checkers read them, and :func:`exports` reads the same lines from
the package's source to build ``__all__`` and the ``__getattr__`` that imports
each name's module when it is first used. ``tests/test_architecture.py``
checks that every exported name loads.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["exports"]


def _declared(source: str, package: str) -> dict[str, str]:
    """Each name the ``if TYPE_CHECKING:`` block imports, and the module it comes from.

    A submodule of the package imported as API (``from searchtrace.traces import
    vocabulary``) maps to itself: ``package.vocabulary``.
    """
    out: dict[str, str] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
            continue
        for sub in node.body:
            if not isinstance(sub, ast.ImportFrom) or not sub.module:
                raise TypeError(f"{package}: its TYPE_CHECKING block holds only 'from module import name' lines")
            for alias in sub.names:
                name = alias.asname or alias.name
                out[name] = f"{package}.{alias.name}" if sub.module == package else sub.module
    return out


def exports(package: str, init_file: str) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` of ``package``, from its ``TYPE_CHECKING`` imports.

    Call it as ``__getattr__, __dir__, __all__ = exports(__name__, __file__)``.
    An exported name must not be a submodule's name, which the import system
    would shadow (a submodule itself may be exported: it maps to itself).
    """
    names = _declared(Path(init_file).read_text(encoding="utf-8"), package)

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if module == f"{package}.{name}":
            return importlib.import_module(module)
        found = importlib.import_module(module)
        if name not in vars(found) and importlib.util.find_spec(f"{module}.{name}") is not None:
            return importlib.import_module(f"{module}.{name}")  # a submodule of a subpackage (traces.spans.vocabulary)
        return getattr(found, name)

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__, sorted(names)
