"""The shape of the package, checked from its source: layers, no cycles, APIs through ``__init__``, one definition each.

Imports are read with ``ast`` from every module of ``searchtrace`` (those inside
functions and under ``TYPE_CHECKING`` too), so a lazy import cannot hide a cycle.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import typing
from collections import Counter, defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "searchtrace"
PACKAGES = ("retriever", "traces", "evals", "dashboard")
FLOOR = "floor"  # the modules directly in searchtrace/ but the CLI root
ROOF = "roof"  # searchtrace.cli and __main__

#: What each layer may import; nothing imports the roof, so the layers cannot form a cycle.
ALLOWED = {
    FLOOR: {FLOOR},
    "traces": {FLOOR, "traces"},
    "retriever": {FLOOR, "traces", "retriever"},
    "evals": {FLOOR, "traces", "retriever", "evals"},
    "dashboard": {FLOOR, "traces", "retriever", "evals", "dashboard"},
    ROOF: {FLOOR, ROOF, *PACKAGES},
}


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (the subpackages through their symlinks)."""
    out = {}
    paths = [Path(folder) / f for folder, _, files in os.walk(PACKAGE, followlinks=True) for f in files]
    for path in sorted(p for p in paths if p.suffix == ".py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in PACKAGES:
        return parts[1]
    return ROOF if module in ("searchtrace.cli", "searchtrace.__main__") else FLOOR


def _resolve(module: str, level: int, base: str | None, is_package: bool) -> str:
    if level == 0:
        return base or ""
    anchor = module.split(".")
    anchor = anchor[: len(anchor) - level + (1 if is_package else 0)]
    return ".".join([*anchor, base] if base else anchor)


def _imports(module: str, path: Path) -> list[tuple[str, str | None, int]]:
    """(imported module, name taken from it or None, line) of every import statement in the module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    out: list[tuple[str, str | None, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node.level, node.module, is_package)
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                out.append((submodule, None, node.lineno) if submodule in MODULES else (target, alias.name, node.lineno))
    return [(m, n, line) for m, n, line in out if m == "searchtrace" or m.startswith("searchtrace.")]


EDGES = {module: _imports(module, path) for module, path in MODULES.items()}


def test_every_import_of_ours_names_a_module_that_exists():
    missing = [f"{m} line {line}: {target}" for m, edges in EDGES.items() for target, _, line in edges
               if target not in MODULES]
    assert not missing, missing


def test_layers_import_only_downward():
    wrong = [f"{m} ({_layer(m)}) line {line} imports {target} ({_layer(target)})"
             for m, edges in EDGES.items() for target, _, line in edges
             if _layer(target) not in ALLOWED[_layer(m)]]
    assert not wrong, "\n".join(wrong)


def test_other_packages_import_only_what_a_package_exports():
    """``from searchtrace.<pkg> import name`` with ``name`` in its ``__all__``; the roof alone may import ``<pkg>.cli``."""
    wrong = []
    for m, edges in EDGES.items():
        for target, name, line in edges:
            if _layer(target) in (_layer(m), FLOOR) or _layer(target) == ROOF:
                continue
            package = f"searchtrace.{_layer(target)}"
            exported = importlib.import_module(package).__all__
            if _layer(m) == ROOF and target == f"{package}.cli":
                continue
            if target == package and name in exported:
                continue
            if target.startswith(package + ".") and target.rsplit(".", 1)[1] in exported and name is None:
                continue  # a submodule the package exports as API (searchtrace.traces.vocabulary)
            wrong.append(f"{m} line {line}: {target}{'.' + name if name else ''} is not in {package}.__all__")
    assert not wrong, "\n".join(wrong)


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph``, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_cycle_between_or_inside_packages():
    between: dict[str, set[str]] = defaultdict(set)
    inside: dict[str, set[str]] = defaultdict(set)
    for m, edges in EDGES.items():
        for target, _, _ in edges:
            if _layer(target) != _layer(m):
                between[_layer(m)].add(_layer(target))
            elif target != m:
                inside[m].add(target)
    assert _cycle(between) is None, _cycle(between)
    assert _cycle(inside) is None, " -> ".join(_cycle(inside) or [])


def test_the_cycle_finder_finds_cycles():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"b"}}) is None


@pytest.mark.parametrize("package", PACKAGES[:3])
def test_exports_are_listed_once_and_each_loads(package):
    """``__all__`` is what the ``TYPE_CHECKING`` block imports (the one list), and every name of it loads."""
    module = importlib.import_module(f"searchtrace.{package}")
    path = MODULES[f"searchtrace.{package}"]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    checked = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.If)
               for sub in node.body if isinstance(sub, ast.ImportFrom) for alias in sub.names}
    assert sorted(checked) == module.__all__
    assigned = [target.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                for target in (t.elts if isinstance(t, ast.Tuple) else [t]) if isinstance(target, ast.Name)]
    assert assigned == ["__getattr__", "__dir__", "__all__"], "the names are listed once: no table, no literal list"
    for name in module.__all__:
        value = getattr(module, name)
        assert value is not None
        if f"searchtrace.{package}.{name}" in MODULES:  # a submodule exported as API, not a name it shadows
            assert value is importlib.import_module(f"searchtrace.{package}.{name}")
    with pytest.raises(AttributeError, match="no attribute"):
        module.no_such_name  # noqa: B018


def test_a_module_of_a_subpackage_exported_by_its_package_loads_as_itself():
    """``from searchtrace.traces import vocabulary`` gives ``traces/spans/vocabulary.py``, as before the grouping."""
    import searchtrace.traces as traces

    assert traces.vocabulary is importlib.import_module("searchtrace.traces.spans.vocabulary")
    assert traces.attributes is importlib.import_module("searchtrace.traces.spans.attributes")


def test_exports_reads_a_type_checking_block():
    from searchtrace._lazy import _declared

    source = "if TYPE_CHECKING:\n    from p import sub\n    from p.mod import A, B as C\nX = 1\n"
    assert _declared(source, "p") == {"sub": "p.sub", "A": "p.mod", "C": "p.mod"}
    with pytest.raises(TypeError, match="only 'from module import name'"):
        _declared("if TYPE_CHECKING:\n    import os\n", "p")


def _constants(path: Path) -> list[object]:
    """Every constant in a module's code (docstrings, and the strings that document attributes, left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    prose = {id(node.value) for node in ast.walk(tree)
             if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and id(node) not in prose]


def _defined_in(predicate: typing.Callable[[object], bool]) -> list[str]:
    return sorted({name for name, path in MODULES.items() if any(predicate(c) for c in _constants(path))})


def test_each_concept_is_defined_in_one_module():
    """The home default, the embedding cache's path, the stage list and the band thresholds: once each."""
    assert _defined_in(lambda c: isinstance(c, str) and ".searchtrace" in c and "://" not in c) == ["searchtrace.home"]
    assert _defined_in(lambda c: c == "embeddings.sqlite") == ["searchtrace.home"]
    assert _defined_in(lambda c: c in ("rewrite", "rerank", "validate")) == ["searchtrace.names"]
    assert _defined_in(lambda c: c in (0.65, 0.35)) == ["searchtrace.retriever.config.model"]
    # the response's TypedDict spells the labels as a Literal: pinned to the enum by the next test
    assert _defined_in(lambda c: c == "medium") == ["searchtrace.names", "searchtrace.retriever.response"]


def test_the_response_type_names_the_bands_of_the_enum():
    from searchtrace.names import Band
    from searchtrace.retriever.response import ResultJson

    band = typing.get_type_hints(ResultJson)["confidenceBand"]
    assert typing.get_args(band) == tuple(b.value for b in Band)


def test_the_cli_roof_is_imported_by_nothing():
    importers = [m for m, edges in EDGES.items() for target, _, _ in edges if target == "searchtrace.cli"
                 and m != "searchtrace.__main__"]
    assert importers == []


#: Keys of the search response's JSON that no other module reads: the record's attributes carry them.
RESPONSE_KEYS = frozenset({"bestScore", "noConfidentResults", "retryHints", "traceId", "traceUrl", "rewrite_terms",
                           "confidenceBand", "component_type", "score_components", "detectedEntities",
                           "relatedTerms", "narrowerQuery", "broaderQuery"})
#: The modules that own the JSON: the response, the error object, and the run folder (which stores a
#: response's fields under the same names, in its own format).
FORMAT_OWNERS = ("searchtrace.retriever.response", "searchtrace.errors", "searchtrace.evals.runs.runfolder")


def _owner(module: str) -> bool:
    return any(module == o or module.startswith(o + ".") for o in FORMAT_OWNERS)


def _key(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _mapping_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, key) of every ``x["key"]``, ``x.get("key")``, ``x.pop("key")`` and ``"key" in x`` in a module."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and (key := _key(node.slice)):
            out.append((node.lineno, key))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "pop")
              and node.args and (key := _key(node.args[0]))):
            out.append((node.lineno, key))
        elif (isinstance(node, ast.Compare) and (key := _key(node.left))
              and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops)):
            out.append((node.lineno, key))
    return out


def _error_reads(tree: ast.AST) -> list[int]:
    """Lines reading an error object as a mapping: ``x["error"]["code"]`` and the like."""
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Subscript) and _key(node.slice) in ("code", "message", "field")
            and isinstance(node.value, ast.Subscript) and _key(node.value.slice) == "error"]


def _error_objects(tree: ast.AST) -> list[int]:
    """Lines that write an error object by hand: a dict literal ``{"error": {"code": ...}}``."""
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Dict)
            and any(_key(k) == "error" and isinstance(v, ast.Dict) and any(_key(kk) == "code" for kk in v.keys)
                    for k, v in zip(node.keys, node.values) if k is not None)]


def test_no_package_reads_the_response_or_an_error_as_a_mapping():
    wrong = []
    for module, path in MODULES.items():
        if _owner(module):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        wrong += [f"{module} line {line}: reads the response's {key!r}" for line, key in _mapping_reads(tree)
                  if key in RESPONSE_KEYS]
        wrong += [f"{module} line {line}: reads an error object's fields" for line in _error_reads(tree)]
    assert not wrong, "\n".join(wrong)


def test_the_error_object_is_written_by_one_function():
    writers = {m for m, path in MODULES.items() if _error_objects(ast.parse(path.read_text(encoding="utf-8")))}
    # a dialect writes another system's error object (its schema, its codes) at its own wire, once
    assert {m for m in writers if not m.startswith("searchtrace.retriever.serve.dialects.")} == {"searchtrace.errors"}
    spelled = _defined_in(lambda c: c == "SEARCH_ERROR")
    assert spelled == ["searchtrace.errors"], "an error code is named through ErrorCode, never as a string"


def test_the_rules_above_see_what_they_forbid():
    tree = ast.parse('r["bestScore"]; r.get("traceId"); "retryHints" in r; e["error"]["code"]; '
                     'x = {"error": {"code": "NOT_FOUND", "message": "m", "field": None}}')
    assert [k for _, k in _mapping_reads(tree)][:3] == ["bestScore", "traceId", "retryHints"]
    assert _error_reads(tree) == [1] and _error_objects(tree) == [1]


def _root_modules(package: str) -> set[str]:
    return {p.stem for p in (PACKAGE / package).iterdir() if p.suffix == ".py" and p.stem != "__init__"}


@pytest.mark.parametrize("package", PACKAGES)
def test_a_package_root_holds_only_the_modules_the_readme_names(package):
    """The README's layout table names every module in a package's root: a new one is placed, not dropped."""
    rows = [line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
            if line.startswith(f"| `{package}/` |")]
    assert len(rows) == 1, f"the README's layout table has no row for {package}/"
    named = set(re.findall(r"`(\w+)`", rows[0]))
    assert not _root_modules(package) - named, f"{package}/ modules the README does not name: " \
                                                f"{sorted(_root_modules(package) - named)}"


#: Modules that write to the terminal by role, beside every ``cli`` module (a command's own output): the floor's
#: progress lines and terminal output, and the ``serve`` command's runner (a command module named ``run``).
TERMINAL_WRITERS = {"searchtrace.progress", "searchtrace.terminal", "searchtrace.__main__",
                    "searchtrace.retriever.serve.run"}

def _terminal_writes(tree: ast.AST) -> list[int]:
    """Lines that call ``print`` or write to ``sys.stdout`` / ``sys.stderr`` (``.write``, ``.writelines``)."""
    def std_stream(node: ast.expr) -> bool:
        if isinstance(node, ast.Name):  # from sys import stderr
            return node.id in ("stdout", "stderr")
        return (isinstance(node, ast.Attribute) and node.attr in ("stdout", "stderr", "__stdout__", "__stderr__")
                and isinstance(node.value, ast.Name) and node.value.id == "sys")

    return sorted(node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Name) and node.func.id == "print")
        or (isinstance(node.func, ast.Attribute) and node.func.attr in ("write", "writelines")
            and std_stream(node.func.value))))


def _printing_library_modules(sources: dict[str, str]) -> list[str]:
    """``module:line`` of each terminal write outside the modules allowed to write there."""
    return [f"{module}:{line}" for module, source in sorted(sources.items())
            if "cli" not in module.split(".") and module not in TERMINAL_WRITERS
            for line in _terminal_writes(ast.parse(source))]


def test_library_code_prints_nothing():
    """A library module logs a notice (``searchtrace.notices.tell``) or returns the line; a ``cli`` module prints."""
    sources = {m: path.read_text(encoding="utf-8") for m, path in MODULES.items()}
    assert _printing_library_modules(sources) == [], "print or write to stdout/stderr only in a cli module"


def test_the_print_rule_sees_a_planted_print():
    planted = 'import sys\nfrom sys import stderr\nprint("x")\nsys.stderr.write("y")\nstderr.write("z")\n' \
              'sys.stdout.writelines(["w"])\nsys.stderr.isatty()\nlog.write("fine")\n'
    assert _terminal_writes(ast.parse(planted)) == [3, 4, 5, 6]
    assert _printing_library_modules({"searchtrace.retriever.index.ensure": planted,
                                      "searchtrace.traces.cli": planted, "searchtrace.evals.labels.cli": planted}) \
        == [f"searchtrace.retriever.index.ensure:{line}" for line in (3, 4, 5, 6)]


#: The groups inside a package, in the order they stand: a module imports only from its own group or an
#: earlier one (the package's ``__init__``, its API, imports them all). In traces/: the span vocabulary and
#: its builders stand on nothing; the store reads their keys; the exporters write to the store; the views
#: render the store's records; the receiver decodes what others send and writes it through the exporters' store
#: writers; the CLI (at the root) assembles them all.
GROUP_ORDER = {"traces": ("spans", "store", "export", "views", "receive", "cli")}


def _group(module: str) -> str:
    """A module's group: the folder under its package (``searchtrace.traces.store.sqlite``: ``store``), or the
    module's own name for one at the package's root."""
    return module.split(".")[2]


def _climbs(package: str, edges: dict[str, list[tuple[str, str | None, int]]]) -> list[str]:
    order = GROUP_ORDER[package]
    root = f"searchtrace.{package}"
    wrong = []
    for m, found in edges.items():
        if not m.startswith(root + "."):
            continue
        for target, _, line in found:
            if target.startswith(root + ".") and order.index(_group(target)) > order.index(_group(m)):
                wrong.append(f"{m} line {line} imports {target}: {_group(m)} stands below {_group(target)}")
    return wrong


@pytest.mark.parametrize("package", sorted(GROUP_ORDER))
def test_no_import_climbs_the_groups_of_a_package(package):
    root = f"searchtrace.{package}"
    groups = {_group(m) for m in MODULES if m.startswith(root + ".")}
    assert groups == set(GROUP_ORDER[package]), f"{package}/ groups not in its row: {groups ^ set(GROUP_ORDER[package])}"
    assert not _climbs(package, EDGES), "\n".join(_climbs(package, EDGES))


def test_the_climb_rule_sees_a_climb():
    edges = {"searchtrace.traces.spans.vocabulary": [("searchtrace.traces.store.records", None, 3)],
             "searchtrace.traces.views.tree": [("searchtrace.traces.store.records", None, 4)]}
    assert _climbs("traces", edges) == ["searchtrace.traces.spans.vocabulary line 3 imports "
                                        "searchtrace.traces.store.records: spans stands below store"]


def _folders(package: str) -> dict[str, set[str]]:
    """Each folder of a package (relative to it, "" for its root) and the modules it holds."""
    out: dict[str, set[str]] = defaultdict(set)
    for path in (PACKAGE / package).resolve().rglob("*.py"):
        if path.stem != "__init__":
            out[str(path.parent.relative_to((PACKAGE / package).resolve()))].add(path.stem)
    return out


@pytest.mark.parametrize("package", sorted(GROUP_ORDER))
def test_every_folder_of_a_grouped_package_is_small_and_named_in_the_readme(package):
    """No folder over 15 modules, and the README's row names every module of every folder."""
    row = next(line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
               if line.startswith(f"| `{package}/` |"))
    named = set(re.findall(r"`(\w+)`", row))
    for folder, modules in _folders(package).items():
        assert len(modules) <= 15, f"{package}/{folder} holds {len(modules)} modules"
        assert not modules - named, f"{package}/{folder} modules the README does not name: {sorted(modules - named)}"


#: The trace store's backends: named only inside the store's folder (and re-exported by the package's API).
CONCRETE_STORES = frozenset({"TraceStore", "PostgresTraceStore"})
STORE_SEAM = "searchtrace.traces.store"


def _names_used(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) of every Name, Attribute and imported alias in a module."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            out.append((node.lineno, node.attr))
        elif isinstance(node, ast.ImportFrom):
            out += [(node.lineno, alias.name) for alias in node.names]
    return out


def _concrete_store_names(module: str, tree: ast.AST) -> list[str]:
    if module == STORE_SEAM or module.startswith(STORE_SEAM + ".") or module == "searchtrace.traces":
        return []
    return [f"{module} line {line}: names {name}" for line, name in sorted(_names_used(tree)) if name in CONCRETE_STORES]


def test_no_module_outside_the_trace_store_names_a_backend_class():
    """Outside ``traces/store/`` a store is the protocol: its capabilities say what differs, the opener
    (``open_trace_store``) chooses the backend. (``searchtrace.traces`` still exports both classes, for
    callers outside the package.)"""
    wrong = [line for m, path in MODULES.items()
             for line in _concrete_store_names(m, ast.parse(path.read_text(encoding="utf-8")))]
    assert not wrong, "\n".join(wrong)


def test_the_backend_rule_sees_a_backend_named():
    tree = ast.parse("from searchtrace.traces import TraceStore\nisinstance(s, traces.PostgresTraceStore)\n"
                     "x: TraceStore = open_trace_store(p)\n")
    assert _concrete_store_names("searchtrace.dashboard.data.traces", tree) == [
        "searchtrace.dashboard.data.traces line 1: names TraceStore",
        "searchtrace.dashboard.data.traces line 2: names PostgresTraceStore",
        "searchtrace.dashboard.data.traces line 3: names TraceStore"]
    assert _concrete_store_names("searchtrace.traces.store.opening", tree) == []


#: evals/ grouped by the question each part answers, each folder's parts (sub-folders and modules) in import order:
#: a module imports only from its own part or an earlier one of each folder it shares with the target, so no import
#: climbs (``scoring`` is pure array code; ``runs`` make and keep runs; ``labels`` say what is relevant and which
#: queries to ask; ``verdicts`` compare runs and gate them; the root's text and commands sit on all four).
#: A folder's ``__init__`` may import any of its parts; every part of a listed folder is placed in its row.
EVALS_ORDER = {
    "": ("scoring", "runs", "labels", "verdicts", "summary_text", "cli"),
    "scoring": ("interning", "rankings", "metrics", "stats", "overlap", "attribution", "latency", "fingerprints"),
    "runs": ("trec", "runfolder", "naming", "masking", "client", "targets", "target", "analysis", "execution", "external", "calibration", "store",
             "runindex"),
    "runs.store": ("schema", "entry", "snapshot", "rows", "rebuild", "materialize", "protocol", "local", "postgres_publish",
                   "postgres", "opening"),
    "runs.execution": ("loop", "corrective", "orchestrate"),
    "runs.targets": ("config", "profiles", "mapping", "wire", "keepalive", "shaped", "session", "lean", "http", "mcp", "opening",
                     "cli"),
    "labels": ("judgments", "querysets", "implicit", "cli"),
    "labels.judgments": ("records", "scale", "labels", "store", "queue", "tally", "agreement", "status", "folder",
                         "session", "grading", "pool", "qrels_import", "qrels_export", "text"),
    "labels.implicit": ("clicks", "coec", "click_grades", "reference", "judge", "text"),
    "verdicts": ("query_texts", "comparability", "comparison", "overlap", "failed", "gate"),
}
EVALS = "searchtrace.evals"
#: The most modules one folder of evals/ holds (``__init__`` aside), and its root (``__init__`` counted).
MAX_FOLDER_MODULES, MAX_EVALS_ROOT = 15, 6


def _evals_parts(module: str) -> list[str]:
    return module[len(EVALS) + 1:].split(".") if module.startswith(EVALS + ".") else []


def _evals_climbs(module: str, target: str) -> str | None:
    """Why ``module`` importing ``target`` climbs :data:`EVALS_ORDER`, or None."""
    mine, theirs = _evals_parts(module), _evals_parts(target)
    shared = 0
    while shared < min(len(mine), len(theirs)) and mine[shared] == theirs[shared]:
        shared += 1
    folder = ".".join(mine[:shared])
    if folder not in EVALS_ORDER or shared >= len(mine) or shared >= len(theirs):
        return None  # a folder without a row, or an import of (or from) the folder's own __init__
    row = EVALS_ORDER[folder]
    if row.index(theirs[shared]) > row.index(mine[shared]):
        return f"{folder or 'evals'}: {mine[shared]} imports {theirs[shared]}, later in {row}"
    return None


def test_evals_imports_never_climb_its_groups():
    wrong = [f"{m} line {line} imports {target}: {why}" for m, edges in EDGES.items() if m.startswith(EVALS + ".")
             for target, _, line in edges if target.startswith(EVALS + ".") and (why := _evals_climbs(m, target))]
    assert not wrong, "\n".join(wrong)


def _evals_folders() -> dict[str, set[str]]:
    """Each folder of evals/ (dotted, the root "") and the parts it holds: modules (``__init__`` aside) and folders."""
    root = PACKAGE / "evals"
    out: dict[str, set[str]] = {}
    for folder, dirs, files in os.walk(root, followlinks=True):
        here = Path(folder)
        key = ".".join(here.relative_to(root).parts)
        out[key] = ({f[:-3] for f in files if f.endswith(".py") and f != "__init__.py"}
                    | {d for d in dirs if (here / d / "__init__.py").exists()})
    return out


def test_evals_order_places_every_part_of_its_folders():
    folders = _evals_folders()
    for folder, row in EVALS_ORDER.items():
        assert folder in folders, f"EVALS_ORDER names a folder evals/ lacks: {folder}"
        assert sorted(row) == sorted(folders[folder]), f"evals/{folder.replace('.', '/')}: {sorted(folders[folder])}"


def test_evals_folders_stay_small():
    root = PACKAGE / "evals"
    for folder, _, files in os.walk(root, followlinks=True):
        modules = [f for f in files if f.endswith(".py") and f != "__init__.py"]
        assert len(modules) <= MAX_FOLDER_MODULES, f"{folder} holds {len(modules)} modules"
    assert len(list(root.glob("*.py"))) <= MAX_EVALS_ROOT, sorted(p.name for p in root.glob("*.py"))


def test_the_evals_climb_rule_sees_a_climb():
    assert _evals_climbs(f"{EVALS}.scoring.rankings", f"{EVALS}.runs.trec.files") is not None
    assert _evals_climbs(f"{EVALS}.runs.trec.files", f"{EVALS}.scoring.rankings") is None
    assert _evals_climbs(f"{EVALS}.runs.execution.loop", f"{EVALS}.runs.execution.corrective") is not None
    assert _evals_climbs(f"{EVALS}.runs", f"{EVALS}.runs.runindex.cache") is None


def test_the_readme_names_every_module_of_evals_folders():
    """The README's evals/ row and the paragraph after the table name every module and folder of evals/."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("| `evals/` |")
    named = set(re.findall(r"`(\w+)(?:/|\.py)?`", text[start:text.index("\nImports run one way", start)]))
    missing = {f"{folder or 'evals'}: {part}" for folder, parts in _evals_folders().items() for part in parts
               if part not in named}
    assert not missing, sorted(missing)


#: run.json's record is built in one place, the module that owns the format (an eval and an external run alike).
RUN_SUMMARY_BUILDER = "searchtrace.evals.runs.runfolder.summary"


def test_run_json_is_built_in_one_module():
    builders = sorted({m for m, path in MODULES.items() for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                       if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "RunSummary"})
    assert builders == [RUN_SUMMARY_BUILDER]


#: The evals modules that write to the terminal: the commands, and the run summary they print. The library
#: prints nothing: its warnings go through ``logging`` (the eval command prints them as ``warning:`` lines).


EVALS_STORE_FOLDERS = ("searchtrace.evals.runs.store", "searchtrace.evals.labels.judgments.store",
                       "searchtrace.evals.labels.judgments.queue")
EVALS_STORE_BACKENDS = frozenset({"HomeRunIndex", "PostgresRunIndex", "JsonlStore", "PostgresJudgmentStore",
                                  "LocalJudgeQueue", "PostgresJudgeQueue"})


def test_no_module_outside_a_store_names_a_store_backend():
    wrong = []
    for m, path in MODULES.items():
        if any(m == f or m.startswith(f + ".") for f in EVALS_STORE_FOLDERS) or path.name == "__init__.py":
            continue
        wrong += [f"{m} line {line}: {name}" for line, name in _names_used(ast.parse(path.read_text(encoding="utf-8")))
                  if name in EVALS_STORE_BACKENDS]
    assert not wrong, "\n".join(wrong)


def test_every_test_module_has_a_name_of_its_own():
    # The suite imports test modules by their file name (no packages under tests/): two files of one name
    # in two folders stop the whole stage at collection ("import file mismatch").
    names = Counter(p.name for p in Path(__file__).resolve().parent.rglob("*.py") if "__pycache__" not in p.parts)
    assert [n for n, k in names.items() if k > 1 and n not in ("conftest.py", "__init__.py")] == []
