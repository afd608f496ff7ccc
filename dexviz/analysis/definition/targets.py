"""Resolve an expression that names a Step (``go_to`` targets, StepList entries, failure routes).

Both SDK generations are accepted: the newest passes the Step class (``go_to(EditContract, x)``),
0.2 passed the registered instance (``go_to(self.second, x)`` with ``self.second = Second()`` in
the Flow's ``__init__``). ``type(self)`` and ``self.__class__`` name the current Step.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from dexviz.analysis.definition.scope import Scope
from dexviz.analysis.definition.symbols import ModuleIndex

__all__ = ["StepClass", "StepTargets", "step_type_name"]

_MAX_DEPTH = 4


@dataclass(frozen=True)
class StepClass:
    """A Step class named in the source: its Step type and its definition, if in this file."""

    name: str
    node: ast.ClassDef | None

    @property
    def in_file(self) -> bool:
        """True when the class is defined in the analysed file."""
        return self.node is not None


def step_type_name(module: ModuleIndex, node: ast.ClassDef) -> str:
    """The Step (or Flow) type: a constant ``get_step_type``/``get_flow_type``, else the name."""
    for method_name in ("get_step_type", "get_flow_type"):
        method = module.method(node, method_name)
        if method is None:
            continue
        returns = [s for s in ast.walk(method) if isinstance(s, ast.Return)]
        if len(returns) == 1 and isinstance(returns[0].value, ast.Constant):
            value = returns[0].value.value
            if isinstance(value, str) and value:
                return value
    return node.name


class StepTargets:
    """Maps expressions to Step classes, and knows which Steps the Flow registered."""

    def __init__(self, module: ModuleIndex, flow_class: ast.ClassDef) -> None:
        self._module = module
        self._flow_class = flow_class
        self._registered: dict[str, StepClass] = {}

    def register(self, step: StepClass) -> None:
        """Record a Step listed in the Flow's StepList."""
        self._registered[step.name] = step

    def is_registered(self, step: StepClass) -> bool:
        """True if ``step`` is in the Flow's StepList."""
        return step.name in self._registered

    @property
    def registered(self) -> tuple[StepClass, ...]:
        """The registered Steps in StepList order."""
        return tuple(self._registered.values())

    def resolve(self, expr: ast.expr, scope: Scope | None, depth: int = 0) -> StepClass | None:
        """The Step class ``expr`` names, or None when it is computed at run time."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, ast.Call):
            return self._resolve_call(expr, scope, depth)
        if isinstance(expr, ast.Name):
            return self._resolve_name(expr.id, scope, depth)
        if isinstance(expr, ast.Attribute):
            return self._resolve_attribute(expr, scope, depth)
        return None

    def _resolve_call(self, expr: ast.Call, scope: Scope | None, depth: int) -> StepClass | None:
        # type(self) is the current Step; Foo() is an instance of Foo.
        func = expr.func
        if isinstance(func, ast.Name) and func.id == "type" and len(expr.args) == 1:
            if _is_self(expr.args[0]) and scope is not None and scope.owner_class is not None:
                return self._of_class(scope.owner_class)
            return None
        return self.resolve(func, scope, depth + 1)

    def _resolve_name(self, name: str, scope: Scope | None, depth: int) -> StepClass | None:
        module = self._module
        local = [] if scope is None else scope.body.assignments.get(name, [])
        if local:
            # A local variable: readable only when it is assigned once.
            value = local[0].value if len(local) == 1 else None
            return None if value is None else self.resolve(value, scope, depth + 1)
        if name in module.classes:
            return self._of_class(module.classes[name])
        if name in module.constants:
            return self.resolve(module.constants[name], scope, depth + 1)
        if name in module.imports.aliases and module.imports.sdk(ast.Name(name)) is None:
            # Imported from another module: a Step whose handlers are not in this file.
            return StepClass(name, None)
        return None

    def _resolve_attribute(
        self, expr: ast.Attribute, scope: Scope | None, depth: int
    ) -> StepClass | None:
        if expr.attr == "__class__" and _is_self(expr.value):
            owner = None if scope is None else scope.owner_class
            return None if owner is None else self._of_class(owner)
        for attributes in self._attribute_sources(scope):
            if expr.attr in attributes:
                return self.resolve(attributes[expr.attr], scope, depth + 1)
        return None

    def _attribute_sources(self, scope: Scope | None) -> list[dict[str, ast.expr]]:
        # self.x inside a Step, self.flow.x or self.x inside the Flow: the instances are
        # assigned in an __init__ or as class attributes.
        module = self._module
        sources = []
        if scope is not None and scope.owner_class is not None:
            sources.append(module.init_attributes(scope.owner_class))
        sources.append(module.init_attributes(self._flow_class))
        sources.append(module.class_attributes(self._flow_class))
        return sources

    def _of_class(self, node: ast.ClassDef) -> StepClass:
        return StepClass(step_type_name(self._module, node), node)


def _is_self(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Name) and expr.id == "self"
