"""Move the engine's layers into sub-packages of ``dexviz/engine`` and rewrite every reference.

The layer of each module is the table ``ENGINE_LAYERS`` of ``tests/test_layering.py`` (the
test already fails on a module in no layer, so the table is complete). Each layer of
``PACKAGES`` becomes ``dexviz/engine/<layer>/`` (``git mv``, plus an ``__init__.py`` that says
what the layer owns, with no re-exports); ``runtime.py`` and the faces stay at the top. Then
every reference in the repository's tracked text files follows: ``dexviz.engine.<m>`` (imports,
``mock.patch`` targets, ``importlib`` names, docs), ``from dexviz.engine import <m>``,
``engine/<m>.py`` paths, ``"engine" / "<m>.py"`` path parts and ```engine.<m>``` in prose.
Moved layers leave the test's table (a sub-package is its modules' layer), the layer diagram of
ARCHITECTURE.md marks the sub-packages, the import blocks it changed are re-sorted with
``ruff --select I001 --fix`` and ARCHITECTURE.md's module list is regenerated.

Run from the repository root (after every branch is merged):
``python scripts/engine_layout.py --check`` prints what would change (exit 1 if anything
would); ``python scripts/engine_layout.py`` does it. Running it again changes nothing; a run
after a late merge moves what is still flat and rewrites references that are still flat.
It stops, changing nothing, on a module in no layer, a relative import, a module that finds
files relative to its own path, or an import it cannot rewrite, naming the file and line.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from engine_layout_rewrite import (
    LayoutError,
    check_python,
    rewrite_architecture,
    rewrite_python_imports,
    rewrite_text,
    text_import_rewrite,
)
from engine_layout_wrap import rewrap

ROOT = Path(__file__).resolve().parents[1]
ENGINE = Path("dexviz/engine")
LAYER_TEST = Path("tests/test_layering.py")
ARCHITECTURE = Path("ARCHITECTURE.md")

PACKAGES: dict[str, str] = {
    "core": """The engine's core: state, unit records, clock, recorder, the services below all.

The bottom layer: nothing here imports another layer of the engine. The few calls upward (a run
closed, a Wait starts SubFlows) go through the interfaces of :mod:`dexviz.engine.core.ports`,
installed once by the runtime.
""",
    "sqlite": """The durable SQLite store: schema, open-time check, compaction, writer lock, fsync.

It encodes the core's records, and imports only the core.
""",
    "commit": """Committing a method's result: deciding, waking waiters, heartbeats, ending runs.

A commit applies one attempt's result and appends the follow-up units; it builds on the core.
""",
    "attempt": """Running one method attempt: the general path and the fast path beside it.

``invoke`` runs an attempt against its context and hands the result to the commit layer;
``fast`` does the common transitions in one place, each inlined block naming its original.
""",
    "flows": """Whole runs: starts, SubFlows, Flow timeouts, continue-as-new and time travel.

Built on the attempt, commit and core layers; the runtime and the faces sit above.
""",
}
"""The layers that become sub-packages, bottom up, each with its ``__init__`` docstring."""

TOP_LEVEL = frozenset({"runtime", "faces"})
"""The layers whose modules stay at the top of ``dexviz/engine``."""

SKIPPED = frozenset({
    LAYER_TEST.as_posix(), "tests/test_engine_layout.py", "scripts/engine_layout.py",
    "scripts/engine_layout_rewrite.py", "scripts/engine_layout_wrap.py",
})  # fmt: skip
"""Files never rewritten as text: the layer test's and this script's test's synthetic trees
name made-up engine modules (the layer table is rewritten on its own), and this script and
its two helpers name the old layout."""


@dataclass
class Plan:
    """Everything one run would do, computed before anything is written."""

    moves: list[tuple[Path, Path]] = field(default_factory=list)
    new_files: dict[Path, str] = field(default_factory=dict)
    rewrites: dict[Path, str] = field(default_factory=dict)
    """Path (where the file is now) -> its new text."""
    too_long: list[str] = field(default_factory=list)
    """``file:line`` of code lines the rename made too long, for a person to wrap."""

    @property
    def empty(self) -> bool:
        """Whether the tree is already laid out."""
        return not (self.moves or self.new_files or self.rewrites)


# ---------------------------------------------------------------------------- the layer table


def _table_node(tree: ast.Module) -> ast.AnnAssign | ast.Assign:
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if isinstance(node, ast.Assign | ast.AnnAssign) and any(
            isinstance(t, ast.Name) and t.id == "ENGINE_LAYERS" for t in targets
        ):
            return node
    raise LayoutError(f"{LAYER_TEST}: no ENGINE_LAYERS table")


def _literal_layers(node: ast.AnnAssign | ast.Assign) -> dict[str, frozenset[str]]:
    """The table's value: ``{"layer": frozenset({"module", ...}), ...}`` as written."""
    value = node.value
    if not isinstance(value, ast.Dict):
        raise LayoutError(f"{LAYER_TEST}:{node.lineno}: ENGINE_LAYERS is not a dict literal")
    layers: dict[str, frozenset[str]] = {}
    for key, item in zip(value.keys, value.values, strict=True):
        ok = (
            isinstance(key, ast.Constant)
            and isinstance(item, ast.Call)
            and isinstance(item.func, ast.Name)
            and item.func.id == "frozenset"
            and len(item.args) <= 1
        )
        if not ok:
            raise LayoutError(f"{LAYER_TEST}:{item.lineno}: expected \"layer\": frozenset({{...}})")
        assert isinstance(key, ast.Constant) and isinstance(item, ast.Call)
        members = ast.literal_eval(item.args[0]) if item.args else ()
        layers[str(key.value)] = frozenset(members)
    return layers


def read_layers(root: Path) -> dict[str, frozenset[str]]:
    """ENGINE_LAYERS of the layer test: layer -> modules at the top of the engine."""
    tree = ast.parse((root / LAYER_TEST).read_text(encoding="utf-8"))
    layers = _literal_layers(_table_node(tree))
    unknown = sorted(set(layers) - set(PACKAGES) - TOP_LEVEL)
    if unknown:
        raise LayoutError(
            f"{LAYER_TEST}: layers {unknown} are neither a sub-package (PACKAGES of this "
            f"script) nor a top-level layer {sorted(TOP_LEVEL)}; say where they go"
        )
    return layers


def rewritten_test(text: str) -> str:
    """The layer test with the moved layers' entries left out of ENGINE_LAYERS."""
    tree = ast.parse(text)
    node = _table_node(tree)
    value = node.value
    assert isinstance(value, ast.Dict)
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    start = value.lineno  # the line of the opening brace; entries follow it
    for key, item in zip(value.keys, value.values, strict=True):
        assert isinstance(key, ast.Constant) and item.end_lineno is not None
        segment = lines[start : item.end_lineno]  # comments above the entry, and the entry
        start = item.end_lineno
        if key.value not in PACKAGES:
            kept.extend(segment)
    assert node.end_lineno is not None
    return "".join(lines[: value.lineno] + kept + lines[start : node.end_lineno]) + "".join(
        lines[node.end_lineno :]
    )


# ---------------------------------------------------------------------------- the moves


def _layer_of(layers: dict[str, frozenset[str]]) -> dict[str, str]:
    found: dict[str, str] = {}
    for layer, modules in layers.items():
        for module in modules:
            if module in found:
                raise LayoutError(f"{LAYER_TEST}: {module} is in {found[module]} and {layer}")
            found[module] = layer
    return found


def _flat_moves(engine: Path, layer_of: dict[str, str]) -> dict[str, str]:
    """The modules at the top of the engine whose layer is a sub-package."""
    placed: dict[str, str] = {}
    unlisted = []
    for path in sorted(engine.glob("*.py")):
        layer = layer_of.get(path.stem)
        if layer is None:
            unlisted.append(path.stem)
        elif layer in PACKAGES:
            placed[path.stem] = layer
    if unlisted:
        raise LayoutError(
            f"{ENGINE}: modules in no layer of ENGINE_LAYERS ({LAYER_TEST}): "
            f"{', '.join(unlisted)}; add each to its layer there, then run this again"
        )
    return placed


def _packaged(root: Path, engine: Path) -> dict[str, str]:
    """The modules already in a sub-package of the engine."""
    placed: dict[str, str] = {}
    for directory in sorted(p for p in engine.iterdir() if p.is_dir()):
        if directory.name == "__pycache__":
            continue
        if directory.name not in PACKAGES:
            raise LayoutError(f"{directory.relative_to(root)}/ is not a layer of PACKAGES")
        for path in sorted(directory.rglob("*.py")):
            if path.parent != directory:
                raise LayoutError(f"{path.relative_to(root)}: nested deeper than one layer")
            if path.stem != "__init__":
                placed[path.stem] = directory.name
    return placed


def plan_moves(root: Path, layers: dict[str, frozenset[str]]) -> dict[str, str]:
    """Every module that is or will be in a sub-package: module name -> package."""
    layer_of = _layer_of(layers)
    engine = root / ENGINE
    flat, packaged = _flat_moves(engine, layer_of), _packaged(root, engine)
    both = sorted(set(flat) & set(packaged))
    if both:
        raise LayoutError(f"{ENGINE}: {both} exist both at the top and in a sub-package")
    placed = {**flat, **packaged}
    clashes = sorted(set(placed) & (set(PACKAGES) | set(layer_of) - set(placed)))
    if clashes:
        raise LayoutError(f"module names {clashes} are also package or top-level names")
    return placed


def _tracked(root: Path) -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=root, check=True, capture_output=True
    ).stdout.decode()
    return sorted(Path(name) for name in listed.split("\0") if name and (root / name).is_file())


def rewrite_file(relative: Path, text: str, placed: dict[str, str]) -> tuple[str, list[str]]:
    """One tracked file's new text, and the lines it leaves too long (``file:line``)."""
    name, original = relative.as_posix(), text
    if relative.suffix == ".py":
        check_python(name, text, placed)
        text = rewrite_python_imports(name, text, placed)
    elif "dexviz.engine import" in text:
        text = text_import_rewrite(name, text, placed)
    user_facing = relative.suffix == ".ipynb" or relative.parts[0] == "docs"
    text = rewrite_text(text, placed, prose_names=not user_facing)
    if relative == ARCHITECTURE:
        text = rewrite_architecture(text, tuple(PACKAGES))
    if text == original or relative.suffix not in (".py", ".md"):
        return text, []
    text, left = rewrap(original, text, markdown=relative.suffix == ".md")
    lines = text.splitlines()
    return text, [f"{name}:{n}" for n in left if not lines[n - 1].lstrip().startswith(
        ("from ", "import "))]  # fmt: skip


def plan(root: Path) -> Plan:
    """What this run would do, without touching the tree."""
    layers = read_layers(root)
    placed = plan_moves(root, layers)
    result = Plan()
    for module, package in sorted(placed.items()):
        source = ENGINE / f"{module}.py"
        if (root / source).exists():
            result.moves.append((source, ENGINE / package / f"{module}.py"))
    for package in sorted(set(placed.values())):
        init = ENGINE / package / "__init__.py"
        if not (root / init).exists():
            result.new_files[init] = f'"""{PACKAGES[package]}"""\n'
    for relative in _tracked(root):
        if relative.as_posix() in SKIPPED:
            continue
        try:
            text = (root / relative).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        new, too_long = rewrite_file(relative, text, placed)
        result.too_long.extend(too_long)
        if new != text:
            result.rewrites[relative] = new
    test_text = (root / LAYER_TEST).read_text(encoding="utf-8")
    if set(layers) & set(PACKAGES):
        result.rewrites[LAYER_TEST] = rewritten_test(test_text)
    return result


# ---------------------------------------------------------------------------- applying


def _moved(path: Path, moves: list[tuple[Path, Path]]) -> Path:
    return dict(moves).get(path, path)


def apply(root: Path, work: Plan) -> None:
    """Carry the plan out: moves with ``git mv``, then the files, then the tidy-ups."""
    for path in work.new_files:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
    for source, target in work.moves:
        subprocess.run(["git", "mv", str(source), str(target)], cwd=root, check=True)
    for path, new_text in work.new_files.items():
        (root / path).write_text(new_text, encoding="utf-8")
        subprocess.run(["git", "add", str(path)], cwd=root, check=True)
    changed = []
    for path, new_text in work.rewrites.items():
        target = _moved(path, work.moves)
        (root / target).write_text(new_text, encoding="utf-8")
        changed.append(target)
    python = sorted(str(path) for path in changed if path.suffix == ".py")
    if python:  # a rename changes where an import sorts, and may make it too long
        subprocess.run([sys.executable, "-m", "ruff", "check", "--quiet", "--select", "I001",
                        "--fix", *python], cwd=root, check=False)  # fmt: skip
    if (root / "scripts/architecture.py").is_file():  # ARCHITECTURE.md's module list
        subprocess.run([sys.executable, "scripts/architecture.py"], cwd=root, check=True)


def report(work: Plan) -> str:
    """What the plan does, one line per move and per file."""
    lines = [f"move {source} -> {target}" for source, target in work.moves]
    lines += [f"create {path}" for path in work.new_files]
    lines += [f"rewrite {path}" for path in work.rewrites]
    lines += [f"too long after the rename, wrap by hand: {where}" for where in work.too_long]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """``--check``: print what would change, exit 1 if anything would; else do it."""
    try:
        work = plan(ROOT)
    except LayoutError as error:
        print(f"engine_layout: {error}", file=sys.stderr)
        return 2
    if work.empty:
        print("engine_layout: the engine is already laid out; nothing to do")
        return 0
    print(report(work))
    if "--check" in argv:
        return 1
    apply(ROOT, work)
    print("engine_layout: done; run tests/test_layering.py, ruff check and mypy dexviz")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
