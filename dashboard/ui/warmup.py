"""Import what later pages need in the background, once per server process.

``evals.compare`` pulls in scipy and rich, and its t-test imports ``scipy.stats``
when it first runs (1.6-2.7 s on a cold process); pandas' Styler pulls in jinja2.
The Compare page would otherwise pay that on its first visit after start.
"""

from __future__ import annotations

import importlib
import threading

__all__ = ["MODULES", "warm_up"]

MODULES = ("searchtrace.evals.verdicts.comparison", "searchtrace.evals.scoring.stats", "scipy.stats",
           "pandas.io.formats.style")  # by name: imported ahead, not used here
_started = threading.Event()


def _imports() -> None:
    for name in MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # the page that needs it reports the failure
            return


def warm_up() -> None:
    """Start the background imports (the first call only)."""
    if not _started.is_set():
        _started.set()
        threading.Thread(target=_imports, name="dashboard-warm-up", daemon=True).start()
