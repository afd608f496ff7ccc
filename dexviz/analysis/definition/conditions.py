"""Rebuild the condition that guards each ``return`` (and each local assignment) of a method.

``if``/``elif``/``else`` add their test or its negation; an early return negates the test for
the code after it, so in::

    if started_edit.should_withdraw:
        return dead_end()
    return go_to(SaveContractEdit, started_edit)

the ``go_to`` is guarded by ``not (started_edit.should_withdraw)``. A branch that only raises
adds no guard: raising is the Execute-failure route, not a decision (the seed lists
SaveContractEdit's ``deadEnd`` without the ``should_fail_edit`` test before it).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from enum import Enum

from dexviz.analysis.definition.symbols import FunctionNode

__all__ = ["Guard", "GuardPart", "Guarded", "GuardedBody", "analyse_body"]


@dataclass(frozen=True)
class GuardPart:
    """One conjunct of a guard; ``compound`` parts need parentheses inside ``and``."""

    text: str
    compound: bool = False

    @classmethod
    def of(cls, test: ast.expr) -> GuardPart:
        """The part for ``test`` being true."""
        return cls(ast.unparse(test), _is_compound(test))

    @classmethod
    def negated(cls, test: ast.expr) -> GuardPart:
        """The part for ``test`` being false: ``not (test)``, or the operand of ``not x``."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return cls.of(test.operand)
        return cls(f"not ({ast.unparse(test)})")


Guard = tuple[GuardPart, ...]


def guard_text(guard: Guard) -> str | None:
    """Join a guard's parts with ``and``; None when unguarded."""
    if not guard:
        return None
    if len(guard) == 1:
        return guard[0].text
    return " and ".join(f"({p.text})" if p.compound else p.text for p in guard)


@dataclass(frozen=True)
class Guarded:
    """An expression reached under a guard: a returned value or an assigned one."""

    value: ast.expr | None
    guard: Guard
    site: ast.stmt


@dataclass
class GuardedBody:
    """The guarded returns and local assignments of one function body."""

    returns: list[Guarded] = field(default_factory=list)
    assignments: dict[str, list[Guarded]] = field(default_factory=dict)


class _Exit(Enum):
    FALLS = "falls"
    RETURNS = "returns"
    RAISES = "raises"


def analyse_body(func: FunctionNode) -> GuardedBody:
    """Walk ``func`` and guard every ``return`` and plain-name assignment it contains."""
    walker = _Walker()
    walker.block(func.body, ())
    return walker.found


class _Walker:
    def __init__(self) -> None:
        self.found = GuardedBody()

    def block(self, stmts: list[ast.stmt], guard: Guard) -> tuple[_Exit, Guard]:
        for stmt in stmts:
            exit_, guard = self.stmt(stmt, guard)
            if exit_ is not _Exit.FALLS:
                return exit_, guard
        return _Exit.FALLS, guard

    def stmt(self, stmt: ast.stmt, guard: Guard) -> tuple[_Exit, Guard]:
        if isinstance(stmt, ast.Return):
            self.found.returns.append(Guarded(stmt.value, guard, stmt))
            return _Exit.RETURNS, guard
        if isinstance(stmt, (ast.Raise, ast.Continue, ast.Break)):
            return _Exit.RAISES, guard
        if isinstance(stmt, ast.If):
            return self.if_(stmt, guard)
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            self.assignment(stmt, guard)
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            self.block(stmt.body, guard)
            self.block(stmt.orelse, guard)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            return self.block(stmt.body, guard)
        elif isinstance(stmt, ast.Try):
            return self.try_(stmt, guard)
        elif isinstance(stmt, ast.Match):
            self.match(stmt, guard)
        return _Exit.FALLS, guard

    def assignment(self, stmt: ast.Assign | ast.AnnAssign, guard: Guard) -> None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            if isinstance(target, ast.Name) and stmt.value is not None:
                entry = Guarded(stmt.value, guard, stmt)
                self.found.assignments.setdefault(target.id, []).append(entry)

    def if_(self, stmt: ast.If, guard: Guard) -> tuple[_Exit, Guard]:
        body, body_guard = self.block(stmt.body, (*guard, GuardPart.of(stmt.test)))
        else_guard: Guard = (*guard, GuardPart.negated(stmt.test))
        orelse, else_guard = self.block(stmt.orelse, else_guard)
        if body is not _Exit.FALLS and orelse is not _Exit.FALLS:
            both = (body, orelse)
            return (_Exit.RETURNS if _Exit.RETURNS in both else _Exit.RAISES), guard
        if body is _Exit.RETURNS:
            return _Exit.FALLS, else_guard
        if orelse is _Exit.RETURNS:
            return _Exit.FALLS, body_guard
        return _Exit.FALLS, guard

    def try_(self, stmt: ast.Try, guard: Guard) -> tuple[_Exit, Guard]:
        body, _ = self.block([*stmt.body, *stmt.orelse], guard)
        exits = [body]
        for handler in stmt.handlers:
            caught = "except" if handler.type is None else f"except {ast.unparse(handler.type)}"
            exits.append(self.block(handler.body, (*guard, GuardPart(caught)))[0])
        self.block(stmt.finalbody, guard)
        if all(e is not _Exit.FALLS for e in exits):
            return (_Exit.RETURNS if _Exit.RETURNS in exits else _Exit.RAISES), guard
        return _Exit.FALLS, guard

    def match(self, stmt: ast.Match, guard: Guard) -> None:
        subject = ast.unparse(stmt.subject)
        for case in stmt.cases:
            parts = [GuardPart(_case_text(subject, case.pattern), compound=True)]
            if case.guard is not None:
                parts.append(GuardPart.of(case.guard))
            self.block(case.body, (*guard, *parts))


def _case_text(subject: str, pattern: ast.pattern) -> str:
    if isinstance(pattern, ast.MatchValue):
        return f"{subject} == {ast.unparse(pattern.value)}"
    if isinstance(pattern, ast.MatchSingleton):
        return f"{subject} is {pattern.value!r}"
    if isinstance(pattern, ast.MatchAs) and pattern.pattern is None:
        return "otherwise"
    return f"{subject} matches {ast.unparse(pattern)}"


def _is_compound(test: ast.expr) -> bool:
    return isinstance(test, (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)) and not (
        isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)
    )
