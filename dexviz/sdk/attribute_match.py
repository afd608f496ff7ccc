"""AttributeMatch: the scalar predicate of ``Client.wait_for_attribute_match``."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}


def _check_operand(op: str, operand: object) -> None:
    if isinstance(operand, bool) or isinstance(operand, str):
        if op not in ("==", "!="):
            raise ValueError(f"AttributeMatch {op} needs an int or float operand, got {operand!r}")
        return
    if not isinstance(operand, (int, float)):
        raise TypeError(
            f"AttributeMatch takes str, bool, int or float, got {type(operand).__name__}"
        )
    if isinstance(operand, float) and not math.isfinite(operand):
        raise ValueError(f"AttributeMatch needs a finite float, got {operand!r}")


@dataclass(frozen=True)
class AttributeMatch:
    """Compare an Attribute with a scalar; a missing Attribute or another type never matches."""

    op: str
    operand: str | bool | int | float

    def __post_init__(self) -> None:
        if self.op not in _OPERATORS:
            raise ValueError(f"unknown AttributeMatch operator {self.op!r}")
        _check_operand(self.op, self.operand)

    @classmethod
    def equal_to(cls, operand: str | bool | int | float) -> AttributeMatch:
        """Match a value equal to ``operand``."""
        return cls("==", operand)

    @classmethod
    def not_equal_to(cls, operand: str | bool | int | float) -> AttributeMatch:
        """Match a present value different from ``operand``."""
        return cls("!=", operand)

    @classmethod
    def greater_than(cls, operand: int | float) -> AttributeMatch:
        """Match a number greater than ``operand``."""
        return cls(">", operand)

    @classmethod
    def greater_than_or_equal(cls, operand: int | float) -> AttributeMatch:
        """Match a number at least ``operand``."""
        return cls(">=", operand)

    @classmethod
    def less_than(cls, operand: int | float) -> AttributeMatch:
        """Match a number less than ``operand``."""
        return cls("<", operand)

    @classmethod
    def less_than_or_equal(cls, operand: int | float) -> AttributeMatch:
        """Match a number at most ``operand``."""
        return cls("<=", operand)

    def matches(self, value: object) -> bool:
        """Whether ``value`` satisfies the match (None — a missing Attribute — never does)."""
        if value is None or not _same_kind(value, self.operand):
            return False
        return _OPERATORS[self.op](value, self.operand)


def _same_kind(value: object, operand: object) -> bool:
    if isinstance(operand, bool) or isinstance(value, bool):
        return isinstance(operand, bool) and isinstance(value, bool)
    if isinstance(operand, str):
        return isinstance(value, str)
    return isinstance(value, (int, float))
