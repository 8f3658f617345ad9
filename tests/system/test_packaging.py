"""What gets installed: one import package, ``searchtrace``, with every module of the repository's folders."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("retriever", "evals", "traces", "dashboard")


def _sources() -> set[str]:
    """Every file the package should carry, as a wheel names it (searchtrace/...): modules, py.typed, and the
    package data (the built-in target profiles, TOML)."""
    out = {f"searchtrace/{p.name}" for p in (ROOT / "searchtrace").iterdir() if p.is_file()}
    for folder in FOLDERS:
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", ".typed", ".toml") and "__pycache__" not in path.parts:
                out.add(f"searchtrace/{folder}/{path.relative_to(ROOT / folder).as_posix()}")
    return out


def _checkout_copy(target: Path) -> Path:
    """What a build reads, copied (links kept as links), so the build's own folders stay out of the checkout."""
    target.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, target / name)
    for name in ("searchtrace", *FOLDERS):
        shutil.copytree(ROOT / name, target / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    return target


@pytest.mark.slow
def test_the_wheel_holds_searchtrace_and_its_metadata_only(tmp_path):
    source = _checkout_copy(tmp_path / "src")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                    "--wheel-dir", str(tmp_path / "dist"), str(source)], check=True, capture_output=True, timeout=300)
    [wheel] = (tmp_path / "dist").glob("searchtrace-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/", 1)[0] for n in names}
    assert top == {"searchtrace", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}, top
    assert _sources() <= set(names), sorted(_sources() - set(names))[:10]
    entry = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "searchtrace = searchtrace.cli:main" in entry


def test_the_installed_package_has_no_generic_top_level_names(tmp_path):
    """From outside the checkout, ``searchtrace.retriever`` imports and ``retriever`` does not."""
    code = ("import importlib.util, searchtrace.retriever, searchtrace.evals, searchtrace.traces, searchtrace.dashboard;"
            "print([n for n in ('retriever', 'evals', 'traces', 'dashboard') if importlib.util.find_spec(n)])")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_package_symlinks_point_at_the_design_folders():
    for folder in FOLDERS:
        link = ROOT / "searchtrace" / folder
        assert link.is_symlink() and os.readlink(link) == f"../{folder}", folder
