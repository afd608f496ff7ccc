"""Where an expression is read (module, owning class, function) and what a return can be.

A Step's ``execute`` may return a decision directly, through a conditional expression, through
a local variable assigned in branches, or through a helper function or method of the same file;
:func:`expand_returns` follows all of these and guards each candidate with its branch condition.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from dexviz.analysis.definition.conditions import (
    Guard,
    GuardedBody,
    GuardPart,
    analyse_body,
)
from dexviz.analysis.definition.model import Diagnostic, Span
from dexviz.analysis.definition.symbols import FunctionNode, ModuleIndex

__all__ = ["Candidate", "Reporter", "Scope", "expand_returns", "expand_value", "span_of"]

_MAX_DEPTH = 4


@dataclass
class Reporter:
    """Collects diagnostics for one analysed file."""

    path: str
    items: list[Diagnostic] = field(default_factory=list)

    def error(self, code: str, message: str, at: ast.AST | None = None) -> None:
        """Record a blocking problem (the graph's ``valid`` becomes false)."""
        self._add("error", code, message, at)

    def warning(self, code: str, message: str, at: ast.AST | None = None) -> None:
        """Record a non-blocking problem."""
        self._add("warning", code, message, at)

    def _add(self, severity: str, code: str, message: str, at: ast.AST | None) -> None:
        line = getattr(at, "lineno", None)
        col = getattr(at, "col_offset", None)
        entry = Diagnostic("error" if severity == "error" else "warning", code, message,
                           self.path, line, col)
        if entry not in self.items:
            self.items.append(entry)


@dataclass
class Scope:
    """A function being read, with the class it belongs to (None for module functions)."""

    module: ModuleIndex
    owner_class: ast.ClassDef | None
    func: FunctionNode
    _body: GuardedBody | None = field(default=None, repr=False)

    @property
    def body(self) -> GuardedBody:
        """The function's guarded returns and assignments (computed once)."""
        if self._body is None:
            self._body = analyse_body(self.func)
        return self._body

    @property
    def where(self) -> str:
        """``Class.method`` or ``function``, for messages."""
        if self.owner_class is None:
            return self.func.name
        return f"{self.owner_class.name}.{self.func.name}"

    def helper(self, call: ast.expr) -> Scope | None:
        """The scope of the in-file helper ``call`` invokes (``f(...)`` or ``self.m(...)``)."""
        if not isinstance(call, ast.Call) or self.module.imports.sdk(call.func) is not None:
            return None
        func = call.func
        if isinstance(func, ast.Name) and func.id in self.module.functions:
            return Scope(self.module, None, self.module.functions[func.id])
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
            and self.owner_class is not None
        ):
            method = self.module.method(self.owner_class, func.attr)
            if method is not None:
                return Scope(self.module, self.owner_class, method)
        return None


@dataclass(frozen=True)
class Candidate:
    """A possible value of a return: the expression, its guard, and where it is read."""

    expr: ast.expr
    guard: Guard
    scope: Scope

    @property
    def span(self) -> Span:
        """Where the candidate expression starts."""
        return span_of(self.expr)


def span_of(node: ast.AST) -> Span:
    """The 1-based line and 0-based column of ``node``."""
    return Span(getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def expand_returns(scope: Scope) -> list[Candidate]:
    """Every value ``scope``'s function may return, with guards, following helpers and locals."""
    found: list[Candidate] = []
    for ret in scope.body.returns:
        if ret.value is not None:
            found += expand_value(ret.value, ret.guard, scope)
    return found


def expand_value(
    expr: ast.expr, guard: Guard, scope: Scope, depth: int = 0
) -> list[Candidate]:
    """The candidates ``expr`` stands for, each with its guard.

    Those are the branches of ``a if c else b``, a local variable's guarded assignments, or
    an in-file helper's returns; anything else is ``expr`` itself.
    """
    if depth > _MAX_DEPTH:
        return [Candidate(expr, guard, scope)]
    if isinstance(expr, ast.IfExp):
        return [
            *expand_value(expr.body, (*guard, GuardPart.of(expr.test)), scope, depth + 1),
            *expand_value(expr.orelse, (*guard, GuardPart.negated(expr.test)), scope, depth + 1),
        ]
    if isinstance(expr, ast.Name) and expr.id in scope.body.assignments:
        return [
            c
            for assigned in scope.body.assignments[expr.id]
            if assigned.value is not None
            for c in expand_value(
                assigned.value, _merge(guard, assigned.guard), scope, depth + 1
            )
        ]
    helper = scope.helper(expr)
    if helper is not None and helper.func is not scope.func:
        return [
            c
            for ret in helper.body.returns
            if ret.value is not None
            for c in expand_value(ret.value, _merge(guard, ret.guard), helper, depth + 1)
        ]
    return [Candidate(expr, guard, scope)]


def _merge(outer: Guard, inner: Guard) -> Guard:
    return (*outer, *(part for part in inner if part not in outer))
