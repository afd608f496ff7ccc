"""Channels and Attributes: their Dex names, and where a Step, RPC or handler uses them.

A Channel is known by its Dex name (``Channel("contractEditToken", str)`` is
``contractEditToken``, not ``CONTRACT_EDIT_TOKEN``). Definitions may be module constants,
class attributes of the Flow or of a Step, or ``self.x = Channel(...)`` in an ``__init__``.
Uses are found in the handler itself and in the in-file helper functions it calls.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Literal

from dexviz.analysis.definition.model import EdgeKind, Span
from dexviz.analysis.definition.scope import Reporter, Scope, span_of
from dexviz.analysis.definition.symbols import ModuleIndex, call_argument, iter_calls

__all__ = [
    "Resource",
    "ResourceTable",
    "ResourceUse",
    "declared_resources",
    "resource_uses",
]

_FACTORIES: dict[str, tuple[Literal["channel", "attribute"], bool]] = {
    "Channel": ("channel", False),
    "ChannelMap": ("channel", True),
    "Attribute": ("attribute", False),
    "AttributeMap": ("attribute", True),
}

_USES: dict[str, dict[str, EdgeKind]] = {
    "channel": {
        "publish": "resource_publish",
        "results": "resource_read",
        "size": "resource_read",
        "pending_messages": "resource_read",
        "find_pending_message": "resource_read",
        "get_all_instance_keys": "resource_read",
        "get_map_size": "resource_read",
        "delete": "resource_write",
    },
    "attribute": {
        "get": "resource_read",
        "get_all_instance_keys": "resource_read",
        "get_map_size": "resource_read",
        "set": "resource_write",
        "delete": "resource_write",
    },
}

_MAX_HELPER_DEPTH = 4


@dataclass(frozen=True)
class Resource:
    """A Channel, ChannelMap, Attribute or AttributeMap definition."""

    kind: Literal["channel", "attribute"]
    name: str
    variable: str
    value_type: str | None
    is_map: bool
    span: Span

    @property
    def node_id(self) -> str:
        """The graph node id, ``channel:<name>`` or ``attribute:<name>``."""
        return f"{self.kind}:{self.name}"


@dataclass(frozen=True)
class ResourceUse:
    """One read, write or publish of a resource inside a handler (or a helper it calls)."""

    resource: Resource
    kind: EdgeKind
    label: str
    at: ast.Call


class ResourceTable:
    """Finds the resource an expression denotes, reading each definition once."""

    def __init__(self, module: ModuleIndex, flow_class: ast.ClassDef, report: Reporter) -> None:
        self._module = module
        self._flow_class = flow_class
        self._report = report
        self._cache: dict[int, Resource | None] = {}

    def resolve(self, expr: ast.expr, scope: Scope | None) -> Resource | None:
        """The resource ``expr`` denotes (``NAME``, ``self.x``, ``Cls.x``), or None."""
        if isinstance(expr, ast.Name):
            value = self._module.constants.get(expr.id)
            return None if value is None else self._definition(value, expr.id)
        if isinstance(expr, ast.Attribute):
            for attributes in self._attribute_sources(expr, scope):
                if expr.attr in attributes:
                    return self._definition(attributes[expr.attr], expr.attr)
            return None
        if isinstance(expr, ast.Call):
            return self._definition(expr, ast.unparse(expr))
        return None

    def _attribute_sources(
        self, expr: ast.Attribute, scope: Scope | None
    ) -> list[dict[str, ast.expr]]:
        module = self._module
        base = expr.value
        if isinstance(base, ast.Name) and base.id in module.classes:
            return [module.class_attributes(module.classes[base.id])]
        sources = []
        if scope is not None and scope.owner_class is not None:
            sources.append(module.class_attributes(scope.owner_class))
            sources.append(module.init_attributes(scope.owner_class))
        sources.append(module.class_attributes(self._flow_class))
        sources.append(module.init_attributes(self._flow_class))
        return sources

    def _definition(self, value: ast.expr, variable: str) -> Resource | None:
        key = id(value)
        if key not in self._cache:
            self._cache[key] = self._read_definition(value, variable)
        return self._cache[key]

    def _read_definition(self, value: ast.expr, variable: str) -> Resource | None:
        factory = self._module.imports.sdk_call(value)
        if factory not in _FACTORIES:
            return None
        assert isinstance(value, ast.Call)
        kind, is_map = _FACTORIES[factory]
        name_expr = call_argument(value, 0, "name")
        type_expr = call_argument(value, 1, "value_type")
        name = self._literal_name(name_expr)
        if name is None:
            self._report.warning(
                "dynamic_resource_name",
                f"the name of {factory} {variable} is computed at run time; "
                f"shown as {variable!r}",
                value,
            )
            name = variable
        value_type = None if type_expr is None else ast.unparse(type_expr)
        return Resource(kind, name, variable, value_type, is_map, span_of(value))

    def _literal_name(self, expr: ast.expr | None) -> str | None:
        if isinstance(expr, ast.Name):
            expr = self._module.constants.get(expr.id)
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str) and expr.value:
            return expr.value
        return None


def resource_uses(scope: Scope, table: ResourceTable, report: Reporter) -> list[ResourceUse]:
    """Every resource use in ``scope``'s function and the in-file helpers it calls."""
    found: list[ResourceUse] = []
    _collect_uses(scope, table, report, found, {id(scope.func)}, 0)
    return found


def _collect_uses(
    scope: Scope, table: ResourceTable, report: Reporter, found: list[ResourceUse],
    seen: set[int], depth: int,
) -> None:
    for call in iter_calls(scope.func):
        use = _use_of(call, scope, table, report)
        if use is not None:
            found.append(use)
            continue
        helper = scope.helper(call)
        if helper is not None and id(helper.func) not in seen and depth < _MAX_HELPER_DEPTH:
            seen.add(id(helper.func))
            _collect_uses(helper, table, report, found, seen, depth + 1)


def _use_of(
    call: ast.Call, scope: Scope, table: ResourceTable, report: Reporter
) -> ResourceUse | None:
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    resource = table.resolve(func.value, scope)
    if resource is None:
        if func.attr == "publish" and len(call.args) >= 2 and _looks_like_resource(func.value):
            report.warning(
                "unresolved_resource",
                f"{ast.unparse(func.value)}.publish(...) in {scope.where}: the Channel "
                "cannot be resolved statically, so this publish is not drawn",
                call,
            )
        return None
    kind = _USES[resource.kind].get(func.attr)
    return None if kind is None else ResourceUse(resource, kind, func.attr, call)


def declared_resources(scope: Scope, table: ResourceTable) -> list[Resource]:
    """The resources listed by ``get_persistence_schema`` (``PersistenceSchema.of(...)``)."""
    found: list[Resource] = []
    for call in iter_calls(scope.func):
        name = scope.module.imports.sdk_call(call)
        if name == "PersistenceSchema.of":
            items = list(call.args)
        elif name == "PersistenceSchema":
            items = [_elt for kw in call.keywords for _elt in _elements(kw.value)]
            items += [_elt for arg in call.args for _elt in _elements(arg)]
        else:
            continue
        for item in items:
            resource = table.resolve(item.value if isinstance(item, ast.Starred) else item, scope)
            if resource is not None and resource not in found:
                found.append(resource)
    return found


def _elements(expr: ast.expr) -> list[ast.expr]:
    if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
        return list(expr.elts)
    return [expr]



def _looks_like_resource(expr: ast.expr) -> bool:
    # A receiver spelled like a definition (NAME, self.x, Cls.x), not a call result.
    return isinstance(expr, (ast.Name, ast.Attribute))
