"""The built-in profiles: a target file each for the five systems searchtrace was designed from.

A profile is an ordinary target file shipped in the package (``profiles/NAME.toml``)
without its endpoint, which the command line gives (``--target-profile huginn
http://host:8000``); ``searchtrace targets show NAME`` prints it for a user to copy.
"""

from __future__ import annotations

from importlib import resources

from searchtrace.errors import NotFoundError
from searchtrace.evals.runs.targets.config import TargetFile, parse_target_file

__all__ = ["load_profile", "profile_names", "profile_text"]


def _folder() -> resources.abc.Traversable:
    return resources.files("searchtrace.evals.runs.targets").joinpath("profiles")


def profile_names() -> list[str]:
    """Every built-in profile, by name."""
    return sorted(p.name[:-5] for p in _folder().iterdir() if p.name.endswith(".toml"))


def profile_text(name: str) -> str:
    """A profile's TOML, as a user would copy it. Raises NotFoundError listing the profiles."""
    if name not in profile_names():
        raise NotFoundError(f"no target profile {name!r}; profiles: {', '.join(profile_names())}",
                            field="target-profile")
    return _folder().joinpath(f"{name}.toml").read_text(encoding="utf-8")


def load_profile(name: str) -> TargetFile:
    """A profile, checked as any target file."""
    return parse_target_file(profile_text(name), f"profile {name}")
