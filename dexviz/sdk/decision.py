"""StepDecision: what an Execute returns — next Steps, a close, or the end of its branch."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any

from dexviz.sdk.channel import Channel
from dexviz.sdk.context import ABSENT

if TYPE_CHECKING:
    from dexviz.sdk.options import StepOptions


class DecisionKind(enum.Enum):
    """The kinds of StepDecision."""

    NEXT = "next"
    GRACEFUL_COMPLETE = "graceful_complete"
    FORCE_COMPLETE = "force_complete"
    FORCE_COMPLETE_IF_CHANNELS_EMPTY = "force_complete_if_channels_empty"
    FORCE_FAIL = "force_fail"
    DEAD_END = "dead_end"


NO_OUTPUT: Any = ABSENT
"""The output of a close decision that carries none (distinct from a None output)."""


def step_target_name(step: Any) -> str:
    """Name a go_to target for messages: the class name, or the instance's class name."""
    return step.__name__ if isinstance(step, type) else type(step).__name__


_new = object.__new__
_NEXT = DecisionKind.NEXT
_DEAD_END = DecisionKind.DEAD_END
_GRACEFUL = DecisionKind.GRACEFUL_COMPLETE


class StepMovement:
    """One next Step: its Step (class or registered instance), its input, and option overrides.

    Immutable by convention: a plain ``__slots__`` class, since one is built per ``go_to``.
    """

    __slots__ = ("step", "input", "options")

    def __init__(self, step: Any, input: Any = None, options: StepOptions | None = None) -> None:
        self.step = step
        self.input = input
        self.options = options

    @staticmethod
    def of(step: Any, input: Any = None, *, options: StepOptions | None = None) -> StepMovement:
        """Move to ``step`` with ``input``; ``options`` replace the Step's own for this one."""
        # __init__, inlined: a fan-out builds thousands of these in one go.
        movement = _new(StepMovement)
        movement.step = step
        movement.input = input
        movement.options = options
        return movement

    def _key(self) -> tuple[Any, ...]:
        return (self.step, self.input, self.options)

    def __eq__(self, other: object) -> bool:
        if type(other) is not StepMovement:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"StepMovement({step_target_name(self.step)}, {self.input!r})"


def _step_types(steps: tuple[Any, ...]) -> tuple[Any, ...]:
    for step in steps:
        if step is None:
            raise TypeError("a canceling selector needs Step classes, got None")
    return steps


class StepDecision:
    """An Execute's decision; build it with go_to, go_to_many, dead_end and the close helpers.

    Immutable by convention: a plain ``__slots__`` class (one is built per Step transition),
    compared and hashed by value like the frozen dataclass it replaces.
    """

    __slots__ = (
        "kind",
        "movements",
        "output",
        "reason",
        "empty_channels",
        "fallback",
        "canceling_steps",
        "canceling_sibling_steps",
        "has_output",
    )

    def __init__(
        self,
        kind: DecisionKind,
        movements: tuple[StepMovement, ...] = (),
        output: Any = NO_OUTPUT,
        reason: str = "",
        empty_channels: tuple[Any, ...] = (),
        fallback: StepMovement | None = None,
        canceling_steps: tuple[Any, ...] = (),
        canceling_sibling_steps: tuple[Any, ...] = (),
    ) -> None:
        self.kind = kind
        self.movements = movements
        self.output = output
        self.reason = reason
        self.empty_channels = empty_channels
        self.fallback = fallback
        self.canceling_steps = canceling_steps
        self.canceling_sibling_steps = canceling_sibling_steps
        # Whether a close decision carries an output (None counts as an output).
        self.has_output: bool = output is not NO_OUTPUT

    def _key(self) -> tuple[Any, ...]:
        return (
            self.kind,
            self.movements,
            self.output,
            self.reason,
            self.empty_channels,
            self.fallback,
            self.canceling_steps,
            self.canceling_sibling_steps,
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not StepDecision:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _with(self, canceling: tuple[Any, ...], siblings: tuple[Any, ...]) -> StepDecision:
        return StepDecision(
            self.kind,
            self.movements,
            self.output,
            self.reason,
            self.empty_channels,
            self.fallback,
            canceling,
            siblings,
        )

    def with_canceling_steps(self, *steps: Any) -> StepDecision:
        """Also cancel every active execution of these Step types once this decision commits."""
        return self._with(self.canceling_steps + _step_types(steps), self.canceling_sibling_steps)

    def with_canceling_sibling_steps(self, *steps: Any) -> StepDecision:
        """Also cancel active siblings (same parent execution) of these Step types."""
        return self._with(self.canceling_steps, self.canceling_sibling_steps + _step_types(steps))

    def __repr__(self) -> str:
        parts = [self.kind.name]
        if self.movements:
            parts.append(", ".join(repr(m) for m in self.movements))
        if self.has_output:
            parts.append(f"output={self.output!r}")
        if self.reason:
            parts.append(f"reason={self.reason!r}")
        return f"StepDecision({'; '.join(parts)})"


def go_to(step: Any, input: Any = None, *, options: StepOptions | None = None) -> StepDecision:
    """Move to one next Step with ``input``."""
    # StepMovement.of and StepDecision(NEXT, ...) without the constructors' calls: one go_to
    # per Step transition.
    movement = _new(StepMovement)
    movement.step = step
    movement.input = input
    movement.options = options
    # _plain's slots, set here: one call less per Step transition (make bench's
    # calls-per-transition row counts every call, and go_to is on every chain step).
    decision = _new(StepDecision)
    decision.kind = _NEXT
    decision.movements = (movement,)
    decision.output = NO_OUTPUT
    decision.reason = ""
    decision.empty_channels = ()
    decision.fallback = None
    decision.canceling_steps = ()
    decision.canceling_sibling_steps = ()
    decision.has_output = False
    return decision


def _plain(kind: DecisionKind, output: Any) -> StepDecision:
    """``StepDecision(kind, output=output)`` without a call through the constructor's defaults.

    ``dead_end`` and ``graceful_complete`` end most branches; ``go_to`` sets the same slots
    itself (one call less per Step transition).
    """
    decision = _new(StepDecision)
    decision.kind = kind
    decision.movements = ()
    decision.output = output
    decision.reason = ""
    decision.empty_channels = ()
    decision.fallback = None
    decision.canceling_steps = ()
    decision.canceling_sibling_steps = ()
    decision.has_output = output is not NO_OUTPUT
    return decision


def go_to_many(*movements: StepMovement) -> StepDecision:
    """Fan out: start every movement's Step, each with its own input, in argument order."""
    return _fan_out("go_to_many", movements)


def go_to_multi(*movements: StepMovement) -> StepDecision:
    """The 0.2 SDK's name for :func:`go_to_many`; its errors say ``go_to_multi`` as 0.2 does."""
    return _fan_out("go_to_multi", movements)


def _fan_out(name: str, movements: tuple[StepMovement, ...]) -> StepDecision:
    if not movements:
        raise ValueError(f"{name} requires a movement")
    if set(map(type, movements)) != {StepMovement}:  # one C pass; the loop names the culprit
        for movement in movements:
            if not isinstance(movement, StepMovement):
                raise TypeError(
                    f"{name} takes StepMovement.of(step, input) values, got "
                    f"{type(movement).__name__}"
                )
    return StepDecision(DecisionKind.NEXT, movements)


def dead_end() -> StepDecision:
    """End this branch only; the Flow keeps running (R82)."""
    return _plain(_DEAD_END, NO_OUTPUT)


def graceful_complete(output: Any = NO_OUTPUT) -> StepDecision:
    """End this branch and complete the Flow once no Step is active (R143, R144)."""
    return _plain(_GRACEFUL, output)


def force_complete(output: Any = NO_OUTPUT) -> StepDecision:
    """Complete the Flow now, ending every other branch (R84)."""
    return StepDecision(DecisionKind.FORCE_COMPLETE, output=output)


def force_fail(reason: str) -> StepDecision:
    """Fail the Flow now with ``reason`` as its error message (R85)."""
    if not isinstance(reason, str):
        raise TypeError(f"force_fail takes a string reason, got {type(reason).__name__}")
    return StepDecision(DecisionKind.FORCE_FAIL, reason=reason)


def force_complete_if_channels_empty(
    output: Any, fallback: StepMovement, *channels: Any
) -> StepDecision:
    """Force-complete if every Channel is empty (reserved messages count), else run fallback."""
    if not channels:
        raise ValueError("force_complete_if_channels_empty needs at least one Channel")
    names = [getattr(c, "name", None) for c in channels]
    for channel in channels:
        if not isinstance(channel, Channel):
            raise TypeError(
                "force_complete_if_channels_empty takes singleton Channels, got "
                f"{type(channel).__name__}"
            )
    if len(set(names)) != len(names):
        raise ValueError(f"force_complete_if_channels_empty: duplicate Channels {names}")
    if not isinstance(fallback, StepMovement):
        raise TypeError("force_complete_if_channels_empty needs a StepMovement fallback")
    return StepDecision(
        DecisionKind.FORCE_COMPLETE_IF_CHANNELS_EMPTY,
        output=output,
        empty_channels=tuple(channels),
        fallback=fallback,
    )
