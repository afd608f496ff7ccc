"""The chooser: every nondeterministic decision of a simulation, made in one place.

A simulation makes three kinds of choice the Dex engine leaves open: which ready unit runs next
(timers due at the same instant join the ready units, so this also orders them), which waiting
execution a published message is offered to first, and whether an injected failure fires at a
failure point covered by a declared ``FaultBudget``. The engine asks a ``Chooser`` for each of
them. ``SeededChooser`` is the default: a seeded random pick, consuming the seed's random source
exactly as the engine always has, so a seed replays the same run byte for byte. An explorer
(``dexviz.explore``) installs its own chooser to enumerate the choices or replay a trace.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass
from typing import Any, Protocol

from dexviz.history._plural import plural


class ChoiceKind(enum.Enum):
    """What a choice decides."""

    READY = "ready"
    WAITER = "waiter"
    FAULT = "fault"


@dataclass(frozen=True)
class FaultPoint:
    """A method attempt about to run whose failure a FaultBudget allows injecting."""

    step_type: str
    method: str
    attempt: int
    execution_id: str

    def __str__(self) -> str:
        return f"{self.execution_id} {self.method} attempt {self.attempt}"


class Chooser(Protocol):
    """Decides every open choice of a simulation engine.

    ``ready`` and ``waiter`` are only asked when there are at least two options.
    """

    def ready(self, units: Sequence[Callable[[], None]]) -> int:
        """The index of the ready unit to run next."""

    def waiter(self, waiters: Sequence[Any], unready: Set[str]) -> int:
        """The position of the waiter to offer a new message to first.

        ``unready`` holds the execution ids already offered in vain; the engine probes forward
        from a position that names one of them.
        """

    def fault(self, point: FaultPoint) -> bool:
        """Whether the budgeted failure fires at ``point``."""


class SeededChooser:
    """Today's choice: a uniform pick from a seeded random source; budget faults never fire.

    Ready units and waiters consume ``rng`` exactly as the engine did before choices went
    through a chooser, so every seeded history is unchanged.
    """

    __slots__ = ("rng",)

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    @classmethod
    def of_seed(cls, seed: int) -> SeededChooser:
        """A chooser with its own random source seeded by ``seed``."""
        return cls(random.Random(seed))

    def ready(self, units: Sequence[Callable[[], None]]) -> int:
        """A uniform pick."""
        return self.rng.randrange(len(units))

    def waiter(self, waiters: Sequence[Any], unready: Set[str]) -> int:
        """A uniform pick (the engine probes forward past ``unready`` ones)."""
        return self.rng.randrange(len(waiters))

    def fault(self, point: FaultPoint) -> bool:
        """Never: a plain simulation injects only the FaultPlan's explicit rules."""
        return False

    def __repr__(self) -> str:
        return "SeededChooser()"


def step_name(step: Any) -> str:
    """A Step's type name from a name, a Step class, or a Step instance."""
    if isinstance(step, str):
        return step
    if isinstance(step, type):
        return step.__name__
    if step is None or isinstance(step, (int, float)):
        # A count passed by position (``FaultBudget.of(Save, 2)``) would name a Step "int".
        raise TypeError(f"expected a Step class, a Step instance or a Step type name, got "
                        f"{step!r}; a count goes by keyword (count=...)")  # fmt: skip
    getter = getattr(step, "get_step_type", None)
    return str(getter()) if callable(getter) else type(step).__name__


@dataclass(frozen=True)
class FaultBudget:
    """At most ``count`` injected failures of the listed Steps' ``method``, wherever they fire.

    Every attempt of a listed Step's method is a failure point while the budget lasts; the
    engine's chooser decides at each one whether the failure fires.
    """

    step_types: tuple[str, ...]
    method: str = "execute"
    count: int = 1

    @classmethod
    def of(cls, *steps: Any, method: str = "execute", count: int = 1) -> FaultBudget:
        """A budget of ``count`` failures of ``method`` over ``steps`` (names or Step classes)."""
        if not steps:
            raise ValueError("a FaultBudget needs at least one Step")
        if method not in ("wait_for", "execute"):
            raise ValueError(f"method must be 'wait_for' or 'execute', got {method!r}")
        if count < 0:
            raise ValueError(f"count must be >= 0, got {count}")
        return cls(tuple(step_name(s) for s in steps), method, count)

    def covers(self, step_type: str, method: str) -> bool:
        """Whether an attempt of ``step_type``'s ``method`` is a failure point."""
        return method == self.method and step_type in self.step_types

    def __str__(self) -> str:
        steps = ", ".join(self.step_types)
        return f"up to {plural(self.count, 'failure')} of {steps}.{self.method}"
