"""Which home folder the dashboard reads: ``--home`` after ``--``, else ``$SEARCHTRACE_HOME``, else the default."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Mapping, Sequence

from searchtrace.home import Home

__all__ = ["resolve_home"]


def resolve_home(argv: Sequence[str], environ: Mapping[str, str]) -> Path:
    """The home folder from script arguments (``streamlit run app.py -- --home DIR``) or the environment."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--home")
    known, _ = parser.parse_known_args(list(argv))
    return Home.resolve(known.home, environ).root.resolve()
