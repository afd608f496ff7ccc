"""Read a WaitFor return: the Wait factory and each condition's label.

Labels follow Dex's graph: ``contractEditToken.for 1``, ``contractEditFinished.for edit_count``,
``orders.at least 3``, ``orders.at most 5``, ``orders.for 1..5``, ``queue[key].for 1`` for a
ChannelMap, a humanised timer (``24 hours timer``, ``1 hour 30 minutes timer``), or a SubFlow's
Flow type.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from dexviz.analysis.definition.context import AnalysisContext
from dexviz.analysis.definition.model import WaitCondition, WaitInfo
from dexviz.analysis.definition.resources import Resource
from dexviz.analysis.definition.scope import Candidate, Scope
from dexviz.analysis.definition.symbols import ModuleIndex, call_argument

__all__ = ["WaitRead", "read_wait", "timer_label"]

_WAIT_FACTORIES = {
    "Wait.until": "until",
    "Wait.all_of": "allOf",
    "Wait.any_of": "anyOf",
    "Wait.any_combination_of": "anyComboOf",
    "Wait.skip_immediately": "skipWaitImmediately",
}

_CHANNEL_CONDITIONS = frozenset({"for_one", "for_n", "at_least", "at_most", "for_range"})

# timedelta's positional parameters, in order, and the unit each is shown in.
_TIMEDELTA_ARGS = ("days", "seconds", "microseconds", "milliseconds", "minutes", "hours", "weeks")
_UNIT_ORDER = ("weeks", "days", "hours", "minutes", "seconds", "milliseconds", "microseconds")


@dataclass(frozen=True)
class WaitRead:
    """A readable WaitFor return: its payload and the Channels its conditions wait on."""

    info: WaitInfo
    channels: tuple[Resource, ...]


def read_wait(candidate: Candidate, ctx: AnalysisContext) -> WaitRead | None:
    """Read ``candidate`` as a ``Wait.*(...)`` expression; None if it is something else."""
    expr = candidate.expr
    wait_type = _WAIT_FACTORIES.get(ctx.sdk_call(expr) or "")
    if wait_type is None:
        return None
    assert isinstance(expr, ast.Call)
    reads: list[tuple[WaitCondition, Resource | None]] = []
    if wait_type == "anyComboOf":
        for group, combo in enumerate(expr.args):
            is_group = isinstance(combo, ast.Call) and (
                ctx.sdk_call(combo) == "ConditionCombination.of"
            )
            members = list(combo.args) if isinstance(combo, ast.Call) and is_group else [combo]
            reads += _conditions(members, candidate.scope, ctx, group)
    else:
        reads = _conditions(list(expr.args), candidate.scope, ctx, None)
    channels: list[Resource] = []
    for _, resource in reads:
        if resource is not None and resource not in channels:
            channels.append(resource)
    info = WaitInfo(wait_type, tuple(condition for condition, _ in reads))
    return WaitRead(info, tuple(channels))


def _conditions(
    args: list[ast.expr], scope: Scope, ctx: AnalysisContext, group: int | None
) -> list[tuple[WaitCondition, Resource | None]]:
    found = []
    for arg in args:
        if isinstance(arg, ast.Starred) and isinstance(arg.value, (ast.List, ast.Tuple)):
            found += _conditions(list(arg.value.elts), scope, ctx, group)
        else:
            found.append(_condition(arg, scope, ctx, group))
    return found


def _condition(
    expr: ast.expr, scope: Scope, ctx: AnalysisContext, group: int | None
) -> tuple[WaitCondition, Resource | None]:
    value = _follow_name(expr, scope, ctx.module)
    channel = _channel_condition(value, scope, ctx, group)
    if channel is not None:
        return channel
    factory = ctx.sdk_call(value)
    if factory == "Timer.by_duration":
        assert isinstance(value, ast.Call)
        duration = call_argument(value, 0, "duration")
        label = "timer" if duration is None else timer_label(duration, ctx.module)
        return WaitCondition("timer", label, group=group), None
    if factory == "SubFlow.run":
        assert isinstance(value, ast.Call)
        flow = call_argument(value, 0, "flow")
        label = "SubFlow" if flow is None else _flow_label(flow)
        return WaitCondition("subflow", label, group=group), None
    text = ast.unparse(expr)
    ctx.report.error(
        "hidden_dex_wait",
        f"WaitFor condition `{text}` in {scope.where} cannot be read statically",
        expr,
    )
    return WaitCondition("unknown", text, expression=text, group=group), None


def _channel_condition(
    expr: ast.expr, scope: Scope, ctx: AnalysisContext, group: int | None
) -> tuple[WaitCondition, Resource] | None:
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)):
        return None
    if expr.func.attr not in _CHANNEL_CONDITIONS:
        return None
    resource = ctx.resources.resolve(expr.func.value, scope)
    if resource is None or resource.kind != "channel":
        return None
    label = _channel_label(resource, expr.func.attr, expr)
    condition = WaitCondition("channel", label, resource_id=resource.node_id, group=group)
    return condition, resource


def _channel_label(resource: Resource, method: str, call: ast.Call) -> str:
    args = [a for a in call.args if not isinstance(a, ast.Starred)]
    keywords = {kw.arg: kw.value for kw in call.keywords if kw.arg}
    prefix = resource.name
    if resource.is_map:
        instance = args.pop(0) if args else keywords.get("instance")
        prefix += f"[{'?' if instance is None else ast.unparse(instance)}]"
    count = args[0] if args else keywords.get("count")
    count_text = "?" if count is None else ast.unparse(count)
    if method == "for_one":
        return f"{prefix}.for 1"
    if method == "for_n":
        return f"{prefix}.for {count_text}"
    if method in ("at_least", "at_most"):
        return f"{prefix}.{method.replace('_', ' ')} {count_text}"
    low, high = keywords.get("at_least"), keywords.get("at_most")
    if low is not None and high is not None:
        return f"{prefix}.for {ast.unparse(low)}..{ast.unparse(high)}"
    if low is not None:
        return f"{prefix}.at least {ast.unparse(low)}"
    return f"{prefix}.at most {'?' if high is None else ast.unparse(high)}"


def timer_label(duration: ast.expr, module: ModuleIndex) -> str:
    """Humanise a timer duration: ``timedelta(hours=24)`` is ``24 hours timer``."""
    parts = _duration_parts(duration, module, 0)
    if parts is None:
        return f"{ast.unparse(duration)} timer"
    shown = [(unit, value) for unit, value in parts if value] or [("seconds", 0)]
    words = [f"{_number(value)} {unit[:-1] if value == 1 else unit}" for unit, value in shown]
    return " ".join(words) + " timer"


def _duration_parts(
    expr: ast.expr, module: ModuleIndex, depth: int
) -> list[tuple[str, float]] | None:
    if isinstance(expr, ast.Name) and expr.id in module.constants and depth < 4:
        return _duration_parts(module.constants[expr.id], module, depth + 1)
    if not isinstance(expr, ast.Call) or not _is_timedelta(expr.func, module):
        return None
    given: dict[str, float] = {}
    if len(expr.args) > len(_TIMEDELTA_ARGS):
        return None
    positional = zip(_TIMEDELTA_ARGS[: len(expr.args)], expr.args, strict=True)
    pairs = [*positional, *((kw.arg, kw.value) for kw in expr.keywords)]
    for unit, value in pairs:
        number = _constant_number(value)
        if unit is None or unit not in _TIMEDELTA_ARGS or number is None:
            return None
        given[unit] = given.get(unit, 0) + number
    return [(unit, given[unit]) for unit in _UNIT_ORDER if unit in given]


def _is_timedelta(func: ast.expr, module: ModuleIndex) -> bool:
    qualified = module.imports.qualify(func)
    return qualified == "datetime.timedelta" or (
        qualified is None and isinstance(func, ast.Name) and func.id == "timedelta"
    )


def _constant_number(expr: ast.expr) -> float | None:
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        inner = _constant_number(expr.operand)
        return None if inner is None else -inner
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)):
        if not isinstance(expr.value, bool):
            return float(expr.value)
    return None


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _flow_label(expr: ast.expr) -> str:
    if isinstance(expr, ast.Call) and not expr.args and not expr.keywords:
        expr = expr.func
    return ast.unparse(expr)


def _follow_name(expr: ast.expr, scope: Scope, module: ModuleIndex) -> ast.expr:
    # A condition stored in a local (assigned once) or a module constant.
    for _ in range(4):
        if not isinstance(expr, ast.Name):
            return expr
        local = scope.body.assignments.get(expr.id, [])
        if len(local) == 1 and local[0].value is not None:
            expr = local[0].value
        elif not local and expr.id in module.constants:
            expr = module.constants[expr.id]
        else:
            return expr
    return expr
