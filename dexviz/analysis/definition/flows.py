"""Find the Flow class in a module and read its StepList, RPCs and timeout handler."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from dexviz.analysis.definition.context import AnalysisContext
from dexviz.analysis.definition.errors import DefinitionSourceError
from dexviz.analysis.definition.scope import Scope, expand_returns
from dexviz.analysis.definition.symbols import FunctionNode, ModuleIndex, call_argument
from dexviz.analysis.definition.targets import StepClass, step_type_name

__all__ = ["RpcMethod", "StepEntry", "find_flow", "flow_classes", "read_rpcs", "read_step_list"]


@dataclass(frozen=True)
class StepEntry:
    """One Step listed by ``get_steps``."""

    step: StepClass
    start: bool
    at: ast.expr


@dataclass(frozen=True)
class RpcMethod:
    """An ``@rpc`` method of the Flow and the RPC name it is invoked by."""

    name: str
    func: FunctionNode


def flow_classes(module: ModuleIndex) -> list[ast.ClassDef]:
    """The module's Flow classes, excluding in-file bases that another Flow class extends."""
    flows = [c for c in module.classes.values() if module.derives_from(c, "Flow")]
    bases = {
        base.name
        for cls in flows
        for base in map(module.local_class, cls.bases)
        if base is not None
    }
    return sorted((c for c in flows if c.name not in bases), key=lambda c: c.lineno)


def find_flow(module: ModuleIndex, wanted: str | None) -> ast.ClassDef:
    """The Flow class to analyse: the one named ``wanted`` (class or Flow type), or the only one.

    Raises:
        DefinitionSourceError: No Flow class, no Flow named ``wanted``, or several Flows and
            no ``wanted`` (the message lists them with their lines).
    """
    flows = flow_classes(module)
    listing = ", ".join(f"{c.name} (line {c.lineno})" for c in flows)
    if wanted is not None:
        for cls in flows:
            if wanted in (cls.name, step_type_name(module, cls)):
                return cls
        found = f"; Flows in this file: {listing}" if flows else ""
        raise DefinitionSourceError(
            module.path, f"no Flow named {wanted!r}{found}", code="flow_not_found"
        )
    if not flows:
        raise DefinitionSourceError(
            module.path,
            "no Flow class found (a class deriving from dex's Flow, imported from dex or "
            "dexviz)",
            code="flow_not_found",
        )
    if len(flows) > 1:
        raise DefinitionSourceError(
            module.path,
            f"{len(flows)} Flows found: {listing}; choose one with flow='{flows[0].name}' "
            f"(CLI: {module.path}:{flows[0].name})",
            code="multiple_flows",
            line=flows[1].lineno,
            col=flows[1].col_offset,
        )
    return flows[0]


def read_step_list(ctx: AnalysisContext) -> list[StepEntry]:
    """The Steps ``get_steps`` registers, start Step first; registers them with the targets."""
    method = ctx.module.method(ctx.flow_class, "get_steps")
    if method is None:
        ctx.report.warning(
            "no_steps", f"{ctx.flow_class.name} has no get_steps; it has no Steps",
            ctx.flow_class,
        )
        return []
    scope = Scope(ctx.module, ctx.flow_class, method)
    entries: list[StepEntry] = []
    for candidate in expand_returns(scope):
        chain = _chain(candidate.expr, scope, ctx)
        _report_duplicates(chain, ctx)
        entries += chain
    starts = [e for e in entries if e.start]
    for extra in starts[1:]:
        ctx.report.error(
            "multiple_start_steps",
            f"{ctx.flow_class.name}.get_steps marks more than one start Step",
            extra.at,
        )
    unique: dict[str, StepEntry] = {}
    for entry in entries:
        unique.setdefault(entry.step.name, entry)
    ordered = sorted(unique.values(), key=lambda e: not e.start)
    for entry in ordered:
        ctx.targets.register(entry.step)
    return ordered


def _report_duplicates(chain: list[StepEntry], ctx: AnalysisContext) -> None:
    """A Step listed twice in one StepList: the engine refuses to register such a Flow."""
    seen: set[str] = set()
    for entry in chain:
        if entry.step.name in seen:
            ctx.report.error(
                "duplicate_step",
                f"{ctx.flow_class.name}.get_steps lists Step {entry.step.name} twice; the "
                "engine rejects a Flow with a duplicate Step type",
                entry.at,
            )
        seen.add(entry.step.name)


def _chain(expr: ast.expr, scope: Scope, ctx: AnalysisContext) -> list[StepEntry]:
    # StepList.start_step(A()).other_steps(B(), C()); StepList.without_start_step(...);
    # StepList.empty(); or a local variable holding such a chain.
    if not isinstance(expr, ast.Call):
        return _dynamic_registration(expr, ctx)
    func = expr.func
    name = ctx.sdk_call(expr)
    if name == "StepList.empty":
        return []
    if name == "StepList.start_step":
        first = call_argument(expr, 0, "step")
        return [] if first is None else _entries([first], True, scope, ctx)
    if name == "StepList.without_start_step":
        return _entries(list(expr.args), False, scope, ctx)
    if isinstance(func, ast.Attribute) and func.attr == "other_steps":
        inner = func.value
        if isinstance(inner, ast.Name):
            local = scope.body.assignments.get(inner.id, [])
            inner = local[0].value if len(local) == 1 and local[0].value else inner
        return _chain(inner, scope, ctx) + _entries(list(expr.args), False, scope, ctx)
    return _dynamic_registration(expr, ctx)


def _entries(
    args: list[ast.expr], start: bool, scope: Scope, ctx: AnalysisContext
) -> list[StepEntry]:
    entries = []
    for arg in args:
        step = None if isinstance(arg, ast.Starred) else ctx.targets.resolve(arg, scope)
        if step is None:
            _dynamic_registration(arg, ctx)
        else:
            entries.append(StepEntry(step, start, arg))
    return entries


def _dynamic_registration(expr: ast.expr, ctx: AnalysisContext) -> list[StepEntry]:
    ctx.report.error(
        "dynamic_step_registration",
        f"{ctx.flow_class.name}.get_steps registers `{ast.unparse(expr)}`, which cannot be "
        "read statically",
        expr,
    )
    return []


def read_rpcs(ctx: AnalysisContext) -> list[RpcMethod]:
    """The Flow's ``@rpc`` methods (bare ``@rpc`` or ``@rpc(name=...)``), in source order."""
    found = []
    for cls in reversed(list(ctx.module.lineage(ctx.flow_class))):
        for stmt in cls.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = _rpc_name(stmt, ctx)
                if name is not None:
                    found.append(RpcMethod(name, stmt))
    return list({rpc.name: rpc for rpc in found}.values())


def _rpc_name(func: FunctionNode, ctx: AnalysisContext) -> str | None:
    for decorator in func.decorator_list:
        if ctx.module.imports.sdk(decorator) == "rpc":
            return func.name
        if isinstance(decorator, ast.Call) and ctx.sdk_call(decorator) == "rpc":
            name = call_argument(decorator, 99, "name")
            if isinstance(name, ast.Constant) and isinstance(name.value, str) and name.value:
                return name.value
            return func.name
    return None
