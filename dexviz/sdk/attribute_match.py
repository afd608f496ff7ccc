"""AttributeMatch: the predicate of ``Client.wait_for_attribute_match``.

Scalars (str, bool, int, float) compare as values; any other operand the Attribute's codec can
encode (a dataclass, a pydantic model, a list) matches by equality of its encoded form, as Dex
compares the stored payload.
"""

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


def is_scalar(operand: object) -> bool:
    """Whether ``operand`` compares as a value (str, bool, int, float), not by encoded form."""
    return isinstance(operand, (str, bool, int, float))


def _check_operand(op: str, operand: object) -> None:
    if operand is None:
        raise TypeError("AttributeMatch needs a value to compare with, got None")
    if not is_scalar(operand) or isinstance(operand, (bool, str)):
        if op not in ("==", "!="):
            raise ValueError(f"AttributeMatch {op} needs an int or float operand, got {operand!r}")
        return
    if isinstance(operand, float) and not math.isfinite(operand):
        raise ValueError(f"AttributeMatch needs a finite float, got {operand!r}")


@dataclass(frozen=True)
class AttributeMatch:
    """Compare an Attribute with a value; a missing Attribute or another type never matches.

    Ordering operators take numbers; ``==`` and ``!=`` take any value the Attribute's codec can
    encode, compared by encoded form.
    """

    op: str
    operand: Any

    def __post_init__(self) -> None:
        if self.op not in _OPERATORS:
            raise ValueError(f"unknown AttributeMatch operator {self.op!r}")
        _check_operand(self.op, self.operand)

    @classmethod
    def equal_to(cls, operand: Any) -> AttributeMatch:
        """Match a value equal to ``operand``."""
        return cls("==", operand)

    @classmethod
    def not_equal_to(cls, operand: Any) -> AttributeMatch:
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

    def matches(self, value: object, encode: Callable[[object], object] | None = None) -> bool:
        """Whether ``value`` satisfies the match (None — a missing Attribute — never does).

        Args:
            value: The Attribute's current value.
            encode: The Attribute's codec; a non-scalar operand is compared by encoded form
                through it (by ``==`` on the values without it).
        """
        if value is None:
            return False
        if not is_scalar(self.operand):
            if encode is None:
                return _OPERATORS[self.op](value, self.operand)
            return _OPERATORS[self.op](encode(value), encode(self.operand))
        if not _same_kind(value, self.operand):
            return False
        return _OPERATORS[self.op](value, self.operand)


def _same_kind(value: object, operand: object) -> bool:
    if isinstance(operand, bool) or isinstance(value, bool):
        return isinstance(operand, bool) and isinstance(value, bool)
    if isinstance(operand, str):
        return isinstance(value, str)
    return isinstance(value, (int, float))
