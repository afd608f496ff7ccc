"""Names in a parsed module: what its imports bind, and its classes, functions and constants.

The analyser recognises the SDK however it is spelled: ``from dexviz import go_to``,
``from dex import go_to as gt``, ``import dex`` + ``dex.go_to(...)``, ``from dex.step import
StepOptions`` or ``from dex import *`` all resolve ``go_to``/``StepOptions`` to the same SDK name.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from dexviz.analysis.definition.loader import SourceFile

__all__ = [
    "SDK_NAMES",
    "SDK_ROOTS",
    "FunctionNode",
    "call_argument",
    "ImportTable",
    "ModuleIndex",
    "iter_calls",
]

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

SDK_ROOTS: frozenset[str] = frozenset({"dex", "dexviz"})
"""Top-level packages whose names are the Dex SDK's (the real SDK and dexviz's copy)."""

SDK_NAMES: frozenset[str] = frozenset(
    {
        "Flow", "Step", "StepList", "PersistenceSchema", "rpc", "RPCResult", "StepOptions",
        "StepMovement", "StepDecision", "go_to", "go_to_many", "go_to_multi", "dead_end",
        "graceful_complete", "force_complete", "force_fail", "force_complete_if_channels_empty",
        "Wait", "ConditionCombination", "Timer", "Channel", "ChannelMap", "Attribute",
        "AttributeMap", "SubFlow", "Stream", "Context", "AsyncContext",
    }
)
"""The SDK names the analyser looks for; a star import from the SDK binds all of them."""

_SDK_SUBMODULES: frozenset[str] = frozenset(
    {
        "sdk", "flow", "step", "wait", "condition", "timer", "attribute", "channel",
        "decision", "options", "subflow", "context", "stream", "compat",
    }
)


@dataclass(frozen=True)
class ImportTable:
    """What the module's imports bind: local name -> qualified name (``dex.go_to``)."""

    aliases: Mapping[str, str]
    sdk_star: bool = False

    @classmethod
    def of(cls, tree: ast.Module) -> ImportTable:
        """Collect the module-level imports of ``tree`` (also inside ``if``/``try`` blocks)."""
        aliases: dict[str, str] = {}
        star = False
        for stmt in _module_statements(tree):
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    local = alias.asname or alias.name.partition(".")[0]
                    aliases[local] = alias.name if alias.asname else local
            elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
                for alias in stmt.names:
                    if alias.name == "*":
                        star = star or stmt.module.partition(".")[0] in SDK_ROOTS
                    else:
                        aliases[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
        return cls(MappingProxyType(aliases), star)

    def qualify(self, expr: ast.expr) -> str | None:
        """The dotted name ``expr`` refers to through the imports, e.g. ``datetime.timedelta``."""
        if isinstance(expr, ast.Name):
            if expr.id in self.aliases:
                return self.aliases[expr.id]
            return f"dex.{expr.id}" if self.sdk_star and expr.id in SDK_NAMES else None
        if isinstance(expr, ast.Attribute):
            base = self.qualify(expr.value)
            return None if base is None else f"{base}.{expr.attr}"
        if isinstance(expr, ast.Subscript):
            return self.qualify(expr.value)
        return None

    def sdk(self, expr: ast.expr) -> str | None:
        """The SDK name ``expr`` refers to (``go_to``, ``Wait.until``), or None."""
        qualified = self.qualify(expr)
        if qualified is None:
            return None
        root, _, rest = qualified.partition(".")
        if root not in SDK_ROOTS or not rest:
            return None
        parts = rest.split(".")
        while len(parts) > 1 and parts[0] in _SDK_SUBMODULES:
            parts.pop(0)
        return ".".join(parts)

    def sdk_call(self, expr: ast.expr) -> str | None:
        """For a call ``f(...)``, the SDK name of ``f``; None for anything else."""
        return self.sdk(expr.func) if isinstance(expr, ast.Call) else None


@dataclass(frozen=True)
class ModuleIndex:
    """A parsed module with its imports and module-level classes, functions and constants."""

    source: SourceFile
    imports: ImportTable
    classes: Mapping[str, ast.ClassDef]
    functions: Mapping[str, FunctionNode]
    constants: Mapping[str, ast.expr]

    @classmethod
    def build(cls, source: SourceFile) -> ModuleIndex:
        """Index ``source``'s module-level definitions (the last definition of a name wins)."""
        classes: dict[str, ast.ClassDef] = {}
        functions: dict[str, FunctionNode] = {}
        constants: dict[str, ast.expr] = {}
        for stmt in _module_statements(source.tree):
            if isinstance(stmt, ast.ClassDef):
                classes[stmt.name] = stmt
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions[stmt.name] = stmt
            else:
                constants.update(_assigned_names(stmt))
        return cls(
            source,
            ImportTable.of(source.tree),
            MappingProxyType(classes),
            MappingProxyType(functions),
            MappingProxyType(constants),
        )

    @property
    def path(self) -> str:
        """The analysed file's path."""
        return self.source.path

    def derives_from(self, node: ast.ClassDef, sdk_name: str) -> bool:
        """True if ``node`` subclasses the SDK class ``sdk_name``, directly or via this file."""
        return self._derives(node, sdk_name, set())

    def _derives(self, node: ast.ClassDef, sdk_name: str, seen: set[str]) -> bool:
        seen.add(node.name)
        for base in node.bases:
            if self.imports.sdk(base) == sdk_name:
                return True
            local = self.local_class(base)
            if local is not None and local.name not in seen and self._derives(
                local, sdk_name, seen
            ):
                return True
        return False

    def local_class(self, expr: ast.expr) -> ast.ClassDef | None:
        """The class of this file that ``expr`` names (``Foo`` or ``Foo[int]``), or None."""
        if isinstance(expr, ast.Subscript):
            expr = expr.value
        if isinstance(expr, ast.Name):
            return self.classes.get(expr.id)
        return None

    def method(self, node: ast.ClassDef, name: str) -> FunctionNode | None:
        """The method ``name`` of ``node`` or of its bases defined in this file."""
        for cls in self.lineage(node):
            for stmt in cls.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                    stmt.name == name
                ):
                    return stmt
        return None

    def lineage(self, node: ast.ClassDef) -> Iterator[ast.ClassDef]:
        """``node`` then its bases defined in this file, depth first, each once."""
        seen: set[str] = set()
        stack = [node]
        while stack:
            cls = stack.pop(0)
            if cls.name in seen:
                continue
            seen.add(cls.name)
            yield cls
            stack.extend(b for b in map(self.local_class, cls.bases) if b is not None)

    def class_attributes(self, node: ast.ClassDef) -> dict[str, ast.expr]:
        """Class-level ``name = value`` assignments of ``node`` and its in-file bases."""
        found: dict[str, ast.expr] = {}
        for cls in reversed(list(self.lineage(node))):
            for stmt in cls.body:
                found.update(_assigned_names(stmt))
        return found

    def init_attributes(self, node: ast.ClassDef) -> dict[str, ast.expr]:
        """``self.name = value`` assignments in ``__init__`` of ``node`` (or an in-file base)."""
        init = self.method(node, "__init__")
        found: dict[str, ast.expr] = {}
        if init is None:
            return found
        for sub in ast.walk(init):
            if isinstance(sub, (ast.Assign, ast.AnnAssign)) and sub.value is not None:
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                for target in targets:
                    if _is_self_attribute(target):
                        assert isinstance(target, ast.Attribute)
                        found[target.attr] = sub.value
        return found


def call_argument(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    """The argument at position ``index`` or passed as ``keyword=``, or None."""
    if len(call.args) > index and not any(
        isinstance(arg, ast.Starred) for arg in call.args[: index + 1]
    ):
        return call.args[index]
    return next((kw.value for kw in call.keywords if kw.arg == keyword), None)


def iter_calls(func: FunctionNode) -> Iterator[ast.Call]:
    """Every call in ``func``'s body, in source order, skipping nested function bodies."""
    for stmt in _function_statements(func):
        for sub in _walk_shallow(stmt):
            if isinstance(sub, ast.Call):
                yield sub


def _walk_shallow(node: ast.AST) -> Iterator[ast.AST]:
    # Depth-first in source order, with an explicit stack: a 1,000-term sum nests 1,000 deep.
    # Nested statements are not entered: _function_statements yields each of them itself, so
    # a 400-deep elif chain is walked once, not 400 times.
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        children = [
            child
            for child in ast.iter_child_nodes(current)
            if not isinstance(child, ast.stmt)
        ]
        stack.extend(reversed(children))


def _function_statements(func: FunctionNode) -> Iterator[ast.stmt]:
    stack: list[ast.stmt] = list(reversed(func.body))
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield stmt
        nested = [
            s for field in ("body", "orelse", "finalbody", "handlers", "cases")
            for s in getattr(stmt, field, ())
        ]
        stack.extend(reversed([s for n in nested for s in _as_statements(n)]))


def _as_statements(node: ast.AST) -> list[ast.stmt]:
    if isinstance(node, (ast.ExceptHandler, ast.match_case)):
        return list(node.body)
    return [node] if isinstance(node, ast.stmt) else []


def _module_statements(tree: ast.Module) -> Iterator[ast.stmt]:
    stack: list[ast.stmt] = list(reversed(tree.body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, (ast.If, ast.Try)):
            nested = [*stmt.body, *stmt.orelse]
            if isinstance(stmt, ast.Try):
                nested += [s for h in stmt.handlers for s in h.body] + stmt.finalbody
            stack.extend(reversed(nested))


def _assigned_names(stmt: ast.stmt) -> dict[str, ast.expr]:
    if isinstance(stmt, ast.Assign):
        return {t.id: stmt.value for t in stmt.targets if isinstance(t, ast.Name)}
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        if isinstance(stmt.target, ast.Name):
            return {stmt.target.id: stmt.value}
    return {}


def _is_self_attribute(expr: ast.expr) -> bool:
    return (
        isinstance(expr, ast.Attribute)
        and isinstance(expr.value, ast.Name)
        and expr.value.id == "self"
    )
