"""Read an Execute, RPC or timeout-handler return: its decision type, movements, cancellations.

``go_to_many`` gets one fan-out movement per target; movements built in a comprehension, a
loop (``movements.append(...)`` inside ``for``) or a spread are marked ``×N``, and a target
listed twice is marked ``×2``. A target computed at run time is kept as a movement without a
Step, so the graph can show it as an ``unknown`` node.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Literal

from dexviz.analysis.definition.context import AnalysisContext
from dexviz.analysis.definition.model import Cancellation, DecisionInfo
from dexviz.analysis.definition.resources import Resource
from dexviz.analysis.definition.scope import Candidate, Scope
from dexviz.analysis.definition.symbols import call_argument
from dexviz.analysis.definition.targets import StepClass

__all__ = ["DecisionRead", "Movement", "read_decision"]

_CLOSE = {
    "graceful_complete": "gracefulComplete",
    "force_complete": "forceComplete",
    "force_fail": "forceFail",
    "dead_end": "deadEnd",
}
_CANCELING = {"with_canceling_steps": "all", "with_canceling_sibling_steps": "siblings"}
_COMPREHENSIONS = (ast.ListComp, ast.GeneratorExp, ast.SetComp)
_MANY = "×N"


@dataclass(frozen=True)
class Movement:
    """One next Step of a decision; ``step`` is None when the target is dynamic."""

    step: StepClass | None
    expression: ast.expr
    multiplicity: str | None = None


@dataclass(frozen=True)
class DecisionRead:
    """A readable decision: its payload, the edge label of its movements, and the movements."""

    info: DecisionInfo
    label: str
    movements: tuple[Movement, ...]
    checked: tuple[Resource, ...] = ()


def read_decision(candidate: Candidate, ctx: AnalysisContext) -> DecisionRead | None:
    """Read ``candidate`` as a StepDecision (or RPCResult); None if it is something else."""
    expr, scope = candidate.expr, candidate.scope
    cancellations: list[Cancellation] = []
    while (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr in _CANCELING
    ):
        scope_kind: Literal["all", "siblings"] = (
            "siblings" if _CANCELING[expr.func.attr] == "siblings" else "all"
        )
        cancellations[:0] = _cancellations(expr.args, scope_kind, scope, ctx)
        expr = expr.func.value
    base = _read_base(expr, scope, ctx)
    if base is None:
        return None
    if ctx.sdk_call(expr) == "RPCResult":
        assert isinstance(expr, ast.Call)
        canceling = call_argument(expr, 2, "canceling_steps")
        if canceling is not None:
            cancellations += _cancellations(_elements(canceling), "all", scope, ctx)
    info = DecisionInfo(
        base.info.type,
        base.info.checked_channels,
        tuple(dict.fromkeys(cancellations)),
    )
    return DecisionRead(info, base.label, base.movements, base.checked)


def _read_base(expr: ast.expr, scope: Scope, ctx: AnalysisContext) -> DecisionRead | None:
    name = ctx.sdk_call(expr)
    if name is None or not isinstance(expr, ast.Call):
        return None
    if name in _CLOSE:
        return DecisionRead(DecisionInfo(_CLOSE[name]), "", ())
    if name == "go_to":
        target = call_argument(expr, 0, "step")
        single = () if target is None else (_movement_to(target, scope, ctx),)
        return DecisionRead(DecisionInfo("goTo"), "go_to", single)
    if name in ("go_to_many", "go_to_multi"):
        movements = _merge(_movements(list(expr.args), scope, ctx))
        return DecisionRead(DecisionInfo("goToMany"), "fan-out", movements)
    if name == "force_complete_if_channels_empty":
        return _read_if_channels_empty(expr, scope, ctx)
    if name == "RPCResult":
        steps = call_argument(expr, 1, "next_steps")
        found = [] if steps is None else _movements([ast.Starred(steps)], scope, ctx)
        return DecisionRead(DecisionInfo("rpcResult"), "next_steps", _merge(found))
    return None


def _read_if_channels_empty(
    expr: ast.Call, scope: Scope, ctx: AnalysisContext
) -> DecisionRead:
    fallback = call_argument(expr, 1, "fallback")
    movements = () if fallback is None else (_movement_of(fallback, scope, ctx),)
    checked: list[Resource] = []
    for arg in expr.args[2:]:
        resource = ctx.resources.resolve(arg, scope)
        if resource is None:
            ctx.report.warning(
                "unresolved_resource",
                f"channel `{ast.unparse(arg)}` checked in {scope.where} cannot be resolved",
                arg,
            )
        elif resource not in checked:
            checked.append(resource)
    info = DecisionInfo(
        "forceCompleteIfChannelsEmpty", tuple(r.node_id for r in checked)
    )
    return DecisionRead(info, "fallback", movements, tuple(checked))


def _movements(args: list[ast.expr], scope: Scope, ctx: AnalysisContext) -> list[Movement]:
    found: list[Movement] = []
    for arg in args:
        if not isinstance(arg, ast.Starred):
            found.append(_movement_of(arg, scope, ctx))
            continue
        value = arg.value
        if isinstance(value, _COMPREHENSIONS):
            found.append(_many(_movement_of(value.elt, scope, ctx)))
        elif isinstance(value, (ast.List, ast.Tuple)):
            found += _movements(list(value.elts), scope, ctx)
        elif isinstance(value, ast.Name) and value.id in scope.body.assignments:
            found += _built_list(value.id, scope, ctx)
        else:
            found.append(Movement(None, value, _MANY))
    return found


def _built_list(name: str, scope: Scope, ctx: AnalysisContext) -> list[Movement]:
    """Movements collected in a local list: assigned, appended (``×N`` in a loop), extended."""
    found: list[Movement] = []
    for value, in_loop in _list_contributions(scope.func.body, name, False):
        parts = _movements([ast.Starred(value)], scope, ctx)
        found += [_many(m) for m in parts] if in_loop else parts
    return found or [Movement(None, ast.Name(name), _MANY)]


def _list_contributions(
    body: list[ast.stmt], name: str, in_loop: bool
) -> list[tuple[ast.expr, bool]]:
    found: list[tuple[ast.expr, bool]] = []
    for stmt in body:
        found += _contribution(stmt, name, in_loop)
        loop = in_loop or isinstance(stmt, (ast.For, ast.AsyncFor, ast.While))
        for field in ("body", "orelse", "finalbody"):
            nested = getattr(stmt, field, None)
            if isinstance(nested, list) and not isinstance(stmt, _SKIPPED):
                found += _list_contributions(nested, name, loop and field == "body" or in_loop)
        for handler in getattr(stmt, "handlers", ()):
            found += _list_contributions(handler.body, name, in_loop)
    return found


_SKIPPED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _contribution(stmt: ast.stmt, name: str, in_loop: bool) -> list[tuple[ast.expr, bool]]:
    if isinstance(stmt, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == name for t in stmt.targets
    ):
        return [(stmt.value, in_loop)]
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        return [(stmt.value, in_loop)] if stmt.target.id == name else []
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return []
    receiver = call.func.value
    if not (isinstance(receiver, ast.Name) and receiver.id == name) or not call.args:
        return []
    if call.func.attr == "append":
        return [(ast.List([call.args[0]]), in_loop)]
    if call.func.attr == "insert" and len(call.args) == 2:
        return [(ast.List([call.args[1]]), in_loop)]
    if call.func.attr == "extend":
        return [(call.args[0], in_loop)]
    return []


def _movement_of(expr: ast.expr, scope: Scope, ctx: AnalysisContext) -> Movement:
    name = ctx.sdk_call(expr)
    if name in ("StepMovement.of", "StepMovement") and isinstance(expr, ast.Call):
        target = call_argument(expr, 0, "step")
        if target is not None:
            return _movement_to(target, scope, ctx)
    if isinstance(expr, ast.Name):
        local = scope.body.assignments.get(expr.id, [])
        if len(local) == 1 and local[0].value is not None:
            return _movement_of(local[0].value, scope, ctx)
    return Movement(None, expr)


def _movement_to(target: ast.expr, scope: Scope, ctx: AnalysisContext) -> Movement:
    return Movement(ctx.targets.resolve(target, scope), target)


def _many(movement: Movement) -> Movement:
    return Movement(movement.step, movement.expression, _MANY)


def _merge(movements: list[Movement]) -> tuple[Movement, ...]:
    """One movement per target Step; repeated targets become ``×2``, ``×3`` or ``×N``."""
    merged: dict[str, list[Movement]] = {}
    order: list[str | Movement] = []
    for movement in movements:
        if movement.step is None:
            order.append(movement)
            continue
        if movement.step.name not in merged:
            order.append(movement.step.name)
        merged.setdefault(movement.step.name, []).append(movement)
    result: list[Movement] = []
    for item in order:
        if isinstance(item, Movement):
            result.append(item)
            continue
        group = merged[item]
        many = any(m.multiplicity == _MANY for m in group)
        count = _MANY if many else (f"×{len(group)}" if len(group) > 1 else None)
        result.append(Movement(group[0].step, group[0].expression, count))
    return tuple(result)


def _cancellations(
    args: list[ast.expr], kind: Literal["all", "siblings"], scope: Scope, ctx: AnalysisContext
) -> list[Cancellation]:
    found = []
    for arg in args:
        step = ctx.targets.resolve(arg, scope)
        if step is None:
            ctx.report.warning(
                "dynamic_cancel_target",
                f"canceled Step `{ast.unparse(arg)}` in {scope.where} is computed at run time",
                arg,
            )
        else:
            found.append(Cancellation(f"step:{step.name}", kind))
    return found


def _elements(expr: ast.expr) -> list[ast.expr]:
    if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
        return list(expr.elts)
    return [expr]
