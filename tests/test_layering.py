"""The import layers of CONTRIBUTING.md and DESIGN.md, checked by scanning every module's AST.

Every ``import`` in dexviz/**/*.py counts: absolute and relative, at module level or inside a
function, plus ``importlib.import_module("...")`` / ``__import__("...")`` with a literal name.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIR = REPO_ROOT / "dexviz"

HEAVY_PACKAGES = frozenset({"graphviz", "matplotlib", "pandas", "ipywidgets", "IPython"})
"""Optional packages that must only be imported lazily, inside viz and widgets."""

INIT = "dexviz"
"""Layer name of the package's own ``__init__`` (``import dexviz`` / ``from dexviz import X``)."""

TOP_LAYERS = frozenset(
    {INIT, "cli", "__main__", "compat", "compare", "examples", "explore", "_grpc_errors",
     "report", "server"}
)
BASE_LAYERS = frozenset(
    {"sdk", "history", "engine", "analysis", "viz", "replay", "widgets", "_optional",
     "_lazy_exports"}
)
ALL_LAYERS = TOP_LAYERS | BASE_LAYERS

# Which other layers each layer may import (its own layer is always allowed).
ALLOWED: dict[str, frozenset[str]] = {
    "sdk": frozenset({"_lazy_exports"}),
    "history": frozenset({"_lazy_exports"}),
    "_optional": frozenset(),
    "_lazy_exports": frozenset(),
    "engine": frozenset({"sdk", "history", "_lazy_exports"}),
    "analysis": frozenset({"history", "sdk"}),
    "viz": frozenset({"analysis", "history", "_optional"}),
    "replay": frozenset({"sdk", "history", "engine", "analysis", "viz", "_optional"}),
    "widgets": ALL_LAYERS,
    **{layer: ALL_LAYERS for layer in TOP_LAYERS},
    "report": ALL_LAYERS - {"widgets"},  # replay <- report <- widgets
}

# Where a heavy package may be imported at all (and even there only inside a function).
HEAVY_ALLOWED_LAYERS = frozenset({"viz", "replay", "widgets", "_optional"})


@dataclass(frozen=True)
class Violation:
    """One forbidden import, located by file and line."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass(frozen=True)
class ImportSite:
    """One imported module name and where the import statement stands."""

    target: str
    line: int
    top_level: bool
    type_checking: bool


# ---------------------------------------------------------------------------- scanning


def module_name(package_dir: Path, path: Path) -> str:
    """Dotted name of a file under the package dir (``dexviz/sdk/__init__.py`` -> dexviz.sdk)."""
    parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str | None:
    """The layer of a dexviz module name, or None for a module outside dexviz."""
    parts = module.split(".")
    if parts[0] != "dexviz":
        return None
    return INIT if len(parts) == 1 else parts[1]


class _ImportCollector(ast.NodeVisitor):
    """Collects import sites, tracking function nesting and ``if TYPE_CHECKING:`` blocks."""

    def __init__(self, module: str, is_package: bool, package_dir: Path) -> None:
        self.module = module
        self.is_package = is_package
        self.package_dir = package_dir
        self.sites: list[ImportSite] = []
        self._function_depth = 0
        self._type_checking_depth = 0

    def _add(self, target: str, node: ast.AST) -> None:
        self.sites.append(
            ImportSite(
                target=target,
                line=getattr(node, "lineno", 0),
                top_level=self._function_depth == 0,
                type_checking=self._type_checking_depth > 0,
            )
        )

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        self._function_depth += 1
        self.generic_visit(node)
        self._function_depth -= 1

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function
    visit_Lambda = _visit_function

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            self._type_checking_depth += 1
            for child in node.body:
                self.visit(child)
            self._type_checking_depth -= 1
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = self._resolve_base(node)
        for alias in node.names:
            candidate = f"{base}.{alias.name}" if base else alias.name
            # `from dexviz import sdk` imports the subpackage, not dexviz/__init__.py.
            self._add(candidate if self._is_submodule(candidate) else base, node)

    def visit_Call(self, node: ast.Call) -> None:
        name = _dynamic_import_name(node)
        if name is not None:
            self._add(name, node)
        self.generic_visit(node)

    def _resolve_base(self, node: ast.ImportFrom) -> str:
        if node.level == 0:
            return node.module or ""
        package = self.module.split(".")
        if not self.is_package:
            package = package[:-1]
        if node.level - 1 >= len(package):
            return f"<relative import beyond the top of {self.module}>"
        anchor = package[: len(package) - (node.level - 1)]
        return ".".join(anchor + ([node.module] if node.module else []))

    def _is_submodule(self, dotted: str) -> bool:
        if not dotted.startswith("dexviz."):
            return False
        relative = Path(*dotted.split(".")[1:])
        base = self.package_dir / relative
        return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _dynamic_import_name(node: ast.Call) -> str | None:
    func = node.func
    is_import_module = isinstance(func, ast.Attribute) and func.attr == "import_module"
    is_dunder_import = isinstance(func, ast.Name) and func.id in ("__import__", "import_module")
    if not (is_import_module or is_dunder_import) or not node.args:
        return None
    first = node.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return None


def import_sites(package_dir: Path, path: Path) -> list[ImportSite]:
    """Every import in one file of the package."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    collector = _ImportCollector(
        module_name(package_dir, path), path.name == "__init__.py", package_dir
    )
    collector.visit(tree)
    return collector.sites


# ---------------------------------------------------------------------------- rules


def _layer_violation(layer: str, site: ImportSite) -> str | None:
    target_layer = layer_of(site.target)
    if target_layer is None or target_layer == layer:
        return None
    if target_layer not in ALL_LAYERS:
        return f"imports {site.target}, which is in no layer of the table"
    if target_layer not in ALLOWED[layer]:
        allowed = sorted(ALLOWED[layer]) or ["nothing else from dexviz"]
        return (
            f"forbidden edge {layer} -> {target_layer} (imports {site.target}); "
            f"{layer} may import only: {', '.join(allowed)}"
        )
    return None


def _heavy_violation(layer: str, site: ImportSite) -> str | None:
    top = site.target.split(".")[0]
    if top not in HEAVY_PACKAGES:
        return None
    if layer not in HEAVY_ALLOWED_LAYERS:
        return (
            f"imports heavy package {site.target} outside dexviz/viz, dexviz/widgets and "
            f"dexviz/_optional.py (use dexviz._optional.require inside a viz function)"
        )
    if site.top_level and not site.type_checking:
        return (
            f"imports heavy package {site.target} at module level; import it lazily inside "
            f"the function that needs it, through dexviz._optional.require"
        )
    return None


def check_file(package_dir: Path, path: Path) -> Iterator[Violation]:
    """Yield every layering violation in one file."""
    relative = path.relative_to(package_dir.parent).as_posix()
    layer = layer_of(module_name(package_dir, path))
    assert layer is not None
    if layer not in ALL_LAYERS:
        yield Violation(
            relative,
            1,
            f"module is in no layer of CONTRIBUTING.md (layer {layer!r}); add it to the "
            f"table there and in tests/test_layering.py, or move it into a layer",
        )
        return
    for site in import_sites(package_dir, path):
        for message in (
            _layer_violation(layer, site),
            _heavy_violation(layer, site),
        ):
            if message is not None:
                yield Violation(relative, site.line, message)


def check_tree(package_dir: Path) -> list[Violation]:
    """Every layering violation in the package, sorted by file and line."""
    violations: list[Violation] = []
    for path in sorted(package_dir.rglob("*.py")):
        violations.extend(check_file(package_dir, path))
    return sorted(violations, key=lambda v: (v.path, v.line, v.message))


def _report(violations: list[Violation]) -> str:
    lines = [f"{len(violations)} import(s) break the layer rules of CONTRIBUTING.md:"]
    lines += [f"  {violation}" for violation in violations]
    return "\n".join(lines)


# ---------------------------------------------------------------------------- tests


def test_package_respects_the_layer_table():
    files = sorted(PACKAGE_DIR.rglob("*.py"))
    assert files, f"no Python files under {PACKAGE_DIR}"
    violations = check_tree(PACKAGE_DIR)
    assert not violations, _report(violations)


def _write_tree(root: Path, files: dict[str, str]) -> Path:
    package_dir = root / "dexviz"
    for relative, source in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")
    return package_dir


SYNTHETIC_TREE = {
    "dexviz/__init__.py": "from dexviz.engine import run\nfrom . import viz\n",
    "dexviz/_optional.py": "import importlib\n",
    "dexviz/sdk/__init__.py": "from .flow import Flow\n",
    "dexviz/sdk/flow.py": """\
        import json
        from dexviz import Flow  # the top-level package: forbidden for sdk

        def later():
            from ..engine import core  # relative and inside a function: still forbidden
        """,
    "dexviz/history/__init__.py": "",
    "dexviz/history/events.py": "import dexviz.history.codec\nfrom . import codec\n",
    "dexviz/history/codec.py": "",
    "dexviz/engine/__init__.py": "from dexviz import sdk, history\nfrom ..sdk.flow import Flow\n",
    "dexviz/engine/core.py": "import pandas  # heavy, and not in viz\n",
    "dexviz/analysis/__init__.py": "import dexviz.engine\n",
    "dexviz/viz/__init__.py": """\
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            import graphviz  # fine: only for annotations
        from dexviz import _optional, analysis
        import matplotlib.pyplot as plt  # heavy at module level

        def render():
            import graphviz  # fine: lazy, inside viz
            return _optional.require("pandas", "table")
        """,
    "dexviz/viz/dot.py": "import importlib\nimportlib.import_module('dexviz.engine')\n",
    "dexviz/widgets/__init__.py": "from dexviz import engine, viz\n",
    "dexviz/cli.py": "from dexviz.examples import demo\nimport dexviz\n",
    "dexviz/examples/demo.py": "from dexviz import Flow\n",
    "dexviz/extras.py": "",
}


def test_checker_reports_each_synthetic_violation_with_file_and_line(tmp_path):
    violations = check_tree(_write_tree(tmp_path, SYNTHETIC_TREE))
    found = {(v.path, v.line) for v in violations}
    assert found == {
        ("dexviz/sdk/flow.py", 2),
        ("dexviz/sdk/flow.py", 5),
        ("dexviz/engine/core.py", 1),
        ("dexviz/analysis/__init__.py", 1),
        ("dexviz/viz/__init__.py", 5),
        ("dexviz/viz/dot.py", 2),
        ("dexviz/extras.py", 1),
    }, _report(violations)
    report = _report(violations)
    assert "dexviz/sdk/flow.py:2: forbidden edge sdk -> dexviz (imports dexviz)" in report
    assert "dexviz/sdk/flow.py:5: forbidden edge sdk -> engine (imports dexviz.engine.core)" in (
        report
    )
    assert "dexviz/analysis/__init__.py:1: forbidden edge analysis -> engine" in report
    assert "dexviz/engine/core.py:1: imports heavy package pandas outside dexviz/viz" in report
    assert "dexviz/viz/__init__.py:5: imports heavy package matplotlib.pyplot at module level" in (
        report
    )
    assert "dexviz/extras.py:1: module is in no layer" in report


@pytest.mark.parametrize(
    ("module", "is_package", "source", "expected"),
    [
        ("dexviz.engine.core", False, "from . import state", "dexviz.engine.state"),
        ("dexviz.engine.core", False, "from .. import sdk", "dexviz.sdk"),
        ("dexviz.engine.core", False, "from ..history.events import E", "dexviz.history.events"),
        ("dexviz.engine", True, "from .core import run", "dexviz.engine.core"),
        ("dexviz.engine", True, "from .. import Flow", "dexviz"),
        ("dexviz", True, "from .engine import run", "dexviz.engine"),
    ],
)
def test_relative_imports_resolve_against_the_importing_module(
    tmp_path, module, is_package, source, expected
):
    package_dir = _write_tree(
        tmp_path,
        {
            "dexviz/__init__.py": "",
            "dexviz/sdk/__init__.py": "",
            "dexviz/engine/__init__.py": "",
            "dexviz/engine/state.py": "",
        },
    )
    collector = _ImportCollector(module, is_package, package_dir)
    collector.visit(ast.parse(source))
    assert [site.target for site in collector.sites] == [expected]


def test_imports_inside_functions_and_type_checking_blocks_are_classified():
    source = textwrap.dedent(
        """\
        import typing
        if typing.TYPE_CHECKING:
            import pandas
        else:
            import json
        class Shown:
            import graphviz
        async def later():
            import matplotlib
        """
    )
    collector = _ImportCollector("dexviz.viz.x", False, PACKAGE_DIR)
    collector.visit(ast.parse(source))
    sites = {site.target: (site.top_level, site.type_checking) for site in collector.sites}
    assert sites == {
        "typing": (True, False),
        "pandas": (True, True),
        "json": (True, False),
        "graphviz": (True, False),  # a class body runs at import time
        "matplotlib": (False, False),
    }


# ---------------------------------------------------------------------------- cycles

CYCLE_PACKAGES = (
    "engine", "analysis", "viz", "sdk", "widgets", "report", "replay", "explore", "history",
    "server", "compare", "cli", "compat",
)
"""Packages inside which no import cycle may exist (``TYPE_CHECKING`` and deferred imports
count: each traces a real dependency). There is no list of tolerated cycles: a cycle is broken
by moving what both sides need into a module both import, or by an interface (see
the engine's ``ports`` module), never by hiding an import."""


def package_graph(package_dir: Path, package: str) -> dict[str, set[str]]:
    """Each module of ``dexviz.<package>`` and the modules of the same package it imports."""
    prefix = f"dexviz.{package}"
    modules: dict[str, Path] = {}
    for path in sorted((package_dir / package).rglob("*.py")):
        modules[module_name(package_dir, path)] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for site in import_sites(package_dir, path):
            target = site.target
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target.startswith(prefix) and target != name and target != prefix:
                graph[name].add(target)
    return graph


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(graph[node])
    return seen


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (the graphs are small)."""
    reach = {node: _reachable(graph, node) for node in graph}
    found: list[frozenset[str]] = []
    for node in sorted(graph):
        component = frozenset({node} | {m for m in reach[node] if node in reach[m]})
        if len(component) > 1 and component not in found:
            found.append(component)
    return found


def _short(modules: frozenset[str]) -> frozenset[str]:
    return frozenset(m.rpartition(".")[2] for m in modules)


def test_no_import_cycle_inside_any_package():
    problems = []
    for package in CYCLE_PACKAGES:
        if not (PACKAGE_DIR / package).is_dir():
            continue
        for cycle in cycles(package_graph(PACKAGE_DIR, package)):
            problems.append(f"{package}: import cycle {sorted(_short(cycle))}")
    assert not problems, "\n".join(problems)


def test_the_cycle_finder_counts_type_checking_and_deferred_imports(tmp_path):
    root = _write_tree(tmp_path, {
        "dexviz/__init__.py": "",
        "dexviz/engine/__init__.py": "",
        "dexviz/engine/a.py": "from dexviz.engine.b import B\n",
        "dexviz/engine/b.py": (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from dexviz.engine.c import C\n"
        ),
        "dexviz/engine/c.py": "def f():\n    from dexviz.engine import a\n",
        "dexviz/engine/d.py": "from dexviz.engine.a import A\n",
    })  # fmt: skip
    found = cycles(package_graph(root, "engine"))
    assert [_short(c) for c in found] == [frozenset({"a", "b", "c"})]


# ---------------------------------------------------------------------------- engine layers

ENGINE_LAYERS: dict[str, frozenset[str]] = {
    # The one place that builds and wires the collaborators.
    "runtime": frozenset({"runtime"}),
    # What users and tools call: the engine, clients, the loop, RPCs, recovery, snapshots.
    "faces": frozenset({
        "__init__", "async_client", "client", "coroutine_replay", "coroutine_trace", "drive",
        "engine", "engine_state", "operations", "recovery", "rpc", "simulate", "snapshot_names",
        "state_copy",
    }),
}  # fmt: skip
"""The layer of every module at the top of ``dexviz/engine`` (its name, without ``.py``).

The order a unit of work runs in, bottom up: ``drive`` picks a unit, ``attempt`` runs the
method, ``commit`` applies its result, ``flows`` act on whole runs. A module in no layer fails
the test: give a new module its layer here (and in ARCHITECTURE.md's diagram). Once
``scripts/engine_layout.py`` has moved a layer into the sub-package ``dexviz/engine/<layer>/``,
the sub-package is the layer of its modules and the layer leaves this table."""

ENGINE_ALLOWED: dict[str, frozenset[str]] = {
    "core": frozenset(),
    "sqlite": frozenset({"core"}),
    "commit": frozenset({"core"}),
    "attempt": frozenset({"core", "commit"}),
    "flows": frozenset({"core", "commit", "attempt"}),
    "runtime": frozenset({"core", "sqlite", "commit", "attempt", "flows"}),
    "faces": frozenset({"core", "sqlite", "commit", "attempt", "flows", "runtime"}),
}
"""Which other engine layers each layer may import (its own is always allowed); a sub-package
of ``dexviz/engine`` is a layer only if it is a key here. A collaborator
that must call upward holds one of the interfaces of the engine's ``ports`` module instead."""


def _sub_module(package_dir: Path, package: str, module: str) -> str:
    """A module's path inside ``dexviz/<package>``, dotted, without ``.py`` (__init__ kept)."""
    prefix = f"dexviz.{package}"
    relative = module[len(prefix) + 1 :] if module != prefix else ""
    is_package = (package_dir / package / Path(*relative.split("."))).is_dir() if relative else True
    return f"{relative}.__init__".lstrip(".") if is_package else relative


def sub_layer_of(
    sub: str, layers: dict[str, frozenset[str]], allowed: dict[str, frozenset[str]]
) -> str | None:
    """The layer of a module by its path inside the package (``_sub_module``), or None.

    A module of a sub-package that names a layer of ``allowed`` is in that layer; any other
    module is in the layer of ``layers`` that lists it.
    """
    package, dot, _ = sub.partition(".")
    if dot and package in allowed:
        return package
    return next((layer for layer, modules in layers.items() if sub in modules), None)


def check_sub_layers(
    package_dir: Path,
    package: str,
    layers: dict[str, frozenset[str]],
    allowed: dict[str, frozenset[str]],
) -> list[Violation]:
    """Every import between modules of ``dexviz/<package>`` that its layer table forbids."""
    graph = package_graph(package_dir, package)
    violations: list[Violation] = []
    for path in sorted((package_dir / package).rglob("*.py")):
        relative = path.relative_to(package_dir.parent).as_posix()
        name = module_name(package_dir, path)
        source = _sub_module(package_dir, package, name)
        source_layer = sub_layer_of(source, layers, allowed)
        if source_layer is None:
            violations.append(Violation(relative, 1, f"{source} is in no layer of the table"))
            continue
        for site in import_sites(package_dir, path):
            target = site.target
            while target and target not in graph:
                target = target.rpartition(".")[0]
            if target not in graph[name]:
                continue
            target_sub = _sub_module(package_dir, package, target)
            target_layer = sub_layer_of(target_sub, layers, allowed)
            if target_layer is None or target_layer == source_layer:
                continue
            if target_layer not in allowed[source_layer]:
                violations.append(Violation(relative, site.line, (
                    f"{source_layer} -> {target_layer}: {source} imports {site.target}; "
                    f"{source_layer} may import only: "
                    f"{', '.join(sorted(allowed[source_layer])) or 'its own layer'}"
                )))  # fmt: skip
    return violations


def test_every_engine_module_is_in_exactly_one_layer():
    engine = PACKAGE_DIR / "engine"
    top = {path.stem for path in engine.glob("*.py")}
    packages = {path.parent.name for path in engine.glob("*/__init__.py")}
    listed = [m for members in ENGINE_LAYERS.values() for m in members]
    assert len(listed) == len(set(listed)), "a module is in two layers"
    assert sorted(top - set(listed)) == [], "modules in no layer of ENGINE_LAYERS"
    assert sorted(set(listed) - top) == [], "ENGINE_LAYERS names modules that do not exist"
    assert sorted(packages - set(ENGINE_ALLOWED)) == [], "sub-packages that are no layer"
    assert sorted(packages & {k for k, v in ENGINE_LAYERS.items() if v}) == [], (
        "layers both listed in ENGINE_LAYERS and moved into a sub-package"
    )
    assert set(ENGINE_ALLOWED) == set(ENGINE_LAYERS) | packages


def test_engine_imports_follow_the_layer_table():
    violations = check_sub_layers(PACKAGE_DIR, "engine", ENGINE_LAYERS, ENGINE_ALLOWED)
    assert not violations, _report(violations)


def test_the_sub_layer_checker_reports_upward_and_unlisted_imports(tmp_path):
    root = _write_tree(tmp_path, {
        "dexviz/__init__.py": "",
        "dexviz/engine/__init__.py": "from dexviz.engine.top import T\n",
        "dexviz/engine/low.py": (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from dexviz.engine.top import T  # upward\n"
        ),
        "dexviz/engine/top.py": "from dexviz.engine import low\n",
        "dexviz/engine/stray.py": "",
        "dexviz/engine/base/__init__.py": '"""A layer that is a sub-package."""\n',
        "dexviz/engine/base/clock.py": "from dexviz.engine.low import L  # upward\n",
        "dexviz/engine/other/thing.py": "",
    })  # fmt: skip
    layers = {"low": frozenset({"low"}), "top": frozenset({"top", "__init__"})}
    allowed = {"base": frozenset(), "low": frozenset({"base"}), "top": frozenset({"low"})}
    found = [str(v) for v in check_sub_layers(root, "engine", layers, allowed)]
    assert found == [
        "dexviz/engine/base/clock.py:1: base -> low: base.clock imports dexviz.engine.low; "
        "base may import only: its own layer",
        "dexviz/engine/low.py:3: low -> top: low imports dexviz.engine.top; "
        "low may import only: base",
        "dexviz/engine/other/thing.py:1: other.thing is in no layer of the table",
        "dexviz/engine/stray.py:1: stray is in no layer of the table",
    ]
