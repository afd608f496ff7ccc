"""Read each handler of a Flow into graph nodes and edges.

A Step contributes its node, one wait node per WaitFor return, one decision node per Execute
return, its Execute-failure route and its resource uses; an ``@rpc`` method and
``handle_timeout`` contribute their node, decisions and resource uses.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from dexviz.analysis.definition.builder import GraphBuilder
from dexviz.analysis.definition.conditions import guard_text
from dexviz.analysis.definition.context import AnalysisContext
from dexviz.analysis.definition.decisions import DecisionRead, Movement, read_decision
from dexviz.analysis.definition.flows import RpcMethod, StepEntry
from dexviz.analysis.definition.model import (
    DecisionInfo,
    Node,
    ResourceInfo,
    WaitCondition,
    WaitInfo,
)
from dexviz.analysis.definition.resources import (
    Resource,
    declared_resources,
    resource_uses,
)
from dexviz.analysis.definition.scope import Candidate, Scope, expand_returns, span_of
from dexviz.analysis.definition.symbols import call_argument, iter_calls
from dexviz.analysis.definition.targets import StepClass
from dexviz.analysis.definition.waits import read_wait

__all__ = ["HandlerReader", "first_doc_line"]

_FAILURE_LABEL = "Execute failure"
_FAILURE_ROUTE = "on_execute_failure_proceed_to"


def first_doc_line(node: ast.AST) -> str | None:
    """The first line of a class's or function's docstring, or None."""
    if not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    doc = ast.get_docstring(node)
    if not doc:
        return None
    return doc.strip().splitlines()[0].strip() or None


class HandlerReader:
    """Adds the nodes and edges of a Flow's Steps, RPCs and timeout handler to a builder."""

    def __init__(self, ctx: AnalysisContext, builder: GraphBuilder) -> None:
        self._ctx = ctx
        self._builder = builder

    def add_step(self, entry: StepEntry) -> Node:
        """Add the node of a registered Step."""
        step = entry.step
        if step.node is None:
            self._ctx.report.error(
                "step_handler_not_in_file",
                f"Step {step.name} is registered but defined in another file; its WaitFor, "
                "Execute and options are not analysed",
                entry.at,
            )
        return self._builder.add_node(self._step_node(step, start=entry.start))

    def read_step(self, entry: StepEntry) -> None:
        """Add a registered Step's waits, decisions, failure route and resource uses."""
        cls = entry.step.node
        if cls is None:
            return
        owner = self._builder.add_node(self._step_node(entry.step, start=entry.start))
        module = self._ctx.module
        wait_for = module.method(cls, "wait_for")
        execute = module.method(cls, "execute")
        if wait_for is not None:
            wait_scope = Scope(module, cls, wait_for)
            self._read_waits(owner, wait_scope)
            self._read_uses(owner, wait_scope)
        if execute is None:
            self._ctx.report.error(
                "missing_execute", f"Step {entry.step.name} has no execute method", cls
            )
        else:
            execute_scope = Scope(module, cls, execute)
            self._read_decisions(owner, execute_scope, rpc=False)
            self._read_uses(owner, execute_scope)
        options = module.method(cls, "get_step_options")
        if options is not None:
            self._read_failure_routes(owner, Scope(module, cls, options))

    def read_rpc(self, rpc: RpcMethod) -> None:
        """Add an RPC node, the decisions of its ``RPCResult`` and its resource uses."""
        node = self._builder.add_node(
            Node.rpc_node(rpc.name, first_doc_line(rpc.func), span_of(rpc.func))
        )
        scope = Scope(self._ctx.module, self._ctx.flow_class, rpc.func)
        self._read_decisions(node, scope, rpc=True)
        self._read_uses(node, scope)

    def read_timeout_handler(self, flow_name: str) -> None:
        """Add the Flow's ``handle_timeout`` node, its decisions and uses, if it has one."""
        func = self._ctx.module.method(self._ctx.flow_class, "handle_timeout")
        if func is None:
            return
        node = self._builder.add_node(
            Node.timeout_handler(flow_name, first_doc_line(func), span_of(func))
        )
        scope = Scope(self._ctx.module, self._ctx.flow_class, func)
        self._read_decisions(node, scope, rpc=False)
        self._read_uses(node, scope)

    def read_schema(self) -> list[Resource]:
        """Add the resources ``get_persistence_schema`` declares; return them."""
        func = self._ctx.module.method(self._ctx.flow_class, "get_persistence_schema")
        if func is None:
            return []
        declared = declared_resources(
            Scope(self._ctx.module, self._ctx.flow_class, func), self._ctx.resources
        )
        for resource in declared:
            self._resource_node(resource)
        return declared

    def _step_node(self, step: StepClass, *, start: bool) -> Node:
        description = None if step.node is None else first_doc_line(step.node)
        span = None if step.node is None else span_of(step.node)
        return Node.step(step.name, start=start, description=description, span=span)

    def _read_waits(self, owner: Node, scope: Scope) -> None:
        for candidate in expand_returns(scope):
            read = read_wait(candidate, self._ctx)
            condition = guard_text(candidate.guard)
            if read is None:
                info = self._unknown_wait(candidate)
                self._builder.add_node(Node.wait_node(owner, info, condition, candidate.span))
                continue
            node = self._builder.add_node(
                Node.wait_node(owner, read.info, condition, candidate.span)
            )
            channels = {resource.node_id: resource for resource in read.channels}
            for item in read.info.conditions:
                if item.resource_id in channels:
                    source = self._resource_node(channels[item.resource_id])
                    self._builder.add_edge("wait_condition", source, node.id, item.label)

    def _unknown_wait(self, candidate: Candidate) -> WaitInfo:
        text = ast.unparse(candidate.expr)
        self._ctx.report.error(
            "hidden_dex_wait",
            f"`{text}` returned by {candidate.scope.where} is not a Wait the analyser can read",
            candidate.expr,
        )
        return WaitInfo("unknown", (WaitCondition("unknown", text, expression=text),))

    def _read_decisions(self, owner: Node, scope: Scope, *, rpc: bool) -> None:
        for candidate in expand_returns(scope):
            read = read_decision(candidate, self._ctx)
            if read is None and rpc:
                continue  # an RPC may return a plain value; only RPCResult moves Steps.
            if read is None:
                read = self._unknown_decision(candidate)
            elif rpc and not read.movements and not read.info.cancellations:
                continue
            condition = guard_text(candidate.guard)
            node = self._builder.add_node(
                Node.decision_node(owner, read.info, condition, candidate.span)
            )
            for movement in read.movements:
                self._movement_edge(owner, node, movement, read.label, condition)
            for resource in read.checked:
                self._builder.add_edge(
                    "resource_read", self._resource_node(resource), owner.id, "empty check"
                )

    def _unknown_decision(self, candidate: Candidate) -> DecisionRead:
        text = ast.unparse(candidate.expr)
        self._ctx.report.error(
            "hidden_dex_decision",
            f"`{text}` returned by {candidate.scope.where} is not a StepDecision the analyser "
            "can read",
            candidate.expr,
        )
        return DecisionRead(DecisionInfo("unknown"), "", ())

    def _movement_edge(
        self, owner: Node, decision: Node, movement: Movement, label: str,
        condition: str | None,
    ) -> None:
        if movement.step is None:
            target = self._unknown_target(owner, movement.expression, f"{decision.name} target")
            label = "dynamic"
        else:
            target = self._target_step(movement.step, movement.expression)
        self._builder.add_edge(
            "transition", decision.id, target, label, condition=condition,
            multiplicity=movement.multiplicity,
        )

    def _read_failure_routes(self, owner: Node, scope: Scope) -> None:
        for call in self._option_calls(scope):
            func = call.func
            if not isinstance(func, ast.Attribute) or func.attr != _FAILURE_ROUTE:
                continue
            target_expr = call_argument(call, 0, "step")
            if target_expr is None:
                continue
            step = self._ctx.targets.resolve(target_expr, scope)
            if step is None:
                target = self._unknown_target(owner, target_expr, "Execute-failure route")
            else:
                target = self._target_step(step, target_expr)
            self._builder.add_edge("failure_transition", owner.id, target, _FAILURE_LABEL)

    def _option_calls(self, scope: Scope) -> Iterator[ast.Call]:
        # Options may be built in the method, in a helper it calls, or in a module constant.
        seen: set[int] = set()
        pending = [scope]
        while pending:
            current = pending.pop(0)
            if id(current.func) in seen:
                continue
            seen.add(id(current.func))
            for call in iter_calls(current.func):
                yield call
                helper = current.helper(call)
                if helper is not None:
                    pending.append(helper)
            for name in ast.walk(current.func):
                if isinstance(name, ast.Name) and name.id in current.module.constants:
                    value = current.module.constants[name.id]
                    yield from (c for c in ast.walk(value) if isinstance(c, ast.Call))

    def _read_uses(self, owner: Node, scope: Scope) -> None:
        for use in resource_uses(scope, self._ctx.resources, self._ctx.report):
            resource = self._resource_node(use.resource)
            if use.kind == "resource_read":
                self._builder.add_edge(use.kind, resource, owner.id, use.label)
            else:
                self._builder.add_edge(use.kind, owner.id, resource, use.label)

    def _resource_node(self, resource: Resource) -> str:
        info = ResourceInfo(resource.value_type, resource.is_map, resource.variable)
        node = Node.resource_node(resource.kind, resource.name, info, resource.span)
        if not self._builder.has(node.id):
            self._builder.add_node(node)
        return node.id

    def _target_step(self, step: StepClass, at: ast.expr) -> str:
        node = self._step_node(step, start=False)
        if not self._ctx.targets.is_registered(step) and not self._builder.has(node.id):
            self._ctx.report.error(
                "unknown_step_target",
                f"Step {step.name} is a target but is not registered in "
                f"{self._ctx.flow_class.name}.get_steps",
                at,
            )
            self._builder.add_node(node)
        return node.id

    def _unknown_target(self, owner: Node, expr: ast.expr, what: str) -> str:
        text = ast.unparse(expr)
        self._ctx.report.error(
            "dynamic_step_target",
            f"{what} `{text}` in {owner.name} is computed at run time; drawn as an unknown node",
            expr,
        )
        return self._builder.add_node(Node.unknown(owner, text, span_of(expr))).id
