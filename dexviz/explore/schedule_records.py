"""The values one schedule is made of: its Setup, a policy's protocol, and what it records.

``Setup`` is what every schedule of one exploration starts from (it pickles by its Flows, for
worker processes); ``Resume`` a state to run on from; ``ChoiceRecord``, ``StepRecord`` and
``Found`` what a schedule did; ``ScheduleResult`` all of it. The runner is ``explore.schedule``.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Protocol

from dexviz.engine.core.choice import FaultBudget
from dexviz.engine.core.faults import FaultPlan
from dexviz.engine.engine import Engine, as_registry
from dexviz.engine.engine_state import EngineSnapshot
from dexviz.explore.actions import Action
from dexviz.explore.canonical import Keys
from dexviz.explore.checks import Check
from dexviz.explore.footprint import Footprint
from dexviz.explore.state_key import StateKey
from dexviz.explore.symmetry import Symmetry
from dexviz.history.event import Event
from dexviz.sdk.registry import Registry

Option = Hashable

UNKEYED = StateKey("", "UNKEYED")
"""The state of a step whose canonical state the policy did not ask for (a replayed step)."""

DEFAULT_MAX_DEPTH = 5_000
"""Steps per schedule when no max_depth is given: a Flow whose timers never stop is bounded."""


class Policy(Protocol):
    """Makes the choices of one schedule."""

    def choose(self, kind: str, options: tuple[Option, ...]) -> int | None:
        """The index of the option to take (at least two options); None stops a step choice."""

    def stepped(self, step: StepRecord) -> None:
        """Told after every step (for sleep sets and priorities)."""


@dataclass(frozen=True)
class Setup:
    """What every schedule of one exploration starts from."""

    registry: Registry
    flow: Any
    input: Any
    flow_id: str
    checks: tuple[Check, ...]
    actions: tuple[Action, ...]
    budget: FaultBudget | None
    max_depth: int
    dependent_always: bool
    symmetry: Symmetry | None = None

    def fault_plan(self) -> FaultPlan:
        """A fresh plan carrying the budget (a plan keeps what it has spent)."""
        return FaultPlan(budget=self.budget)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # The registry holds locks: a worker process (or Dask worker) rebuilds it from the
        # Flows, which pickle by their classes.
        flows = tuple(d.flow for d in self.registry.definitions)
        return (
            _rebuild,
            (
                flows,
                self.flow,
                self.input,
                self.flow_id,
                self.checks,
                self.actions,
                self.budget,
                self.max_depth,
                self.dependent_always,
                self.symmetry,
            ),
        )


def _rebuild(flows: tuple[Any, ...], *rest: Any) -> Setup:
    return Setup(as_registry(list(flows)), *rest)


@dataclass(frozen=True)
class Resume:
    """A state to run on from, reached after ``depth`` steps.

    The engine's snapshot and the explorer's side of it: the client actions left and the
    checks' monitors (pickled, or copies that each resume copies again:
    ``checks.copied_monitors``).
    """

    snapshot: EngineSnapshot
    left: tuple[int, ...]
    monitors: bytes | tuple[tuple[str, Any], ...]
    depth: int
    state: StateKey | None = None
    """The state's canonical key when it was taken: a resume need not describe it again."""
    digests: dict[str, str] | None = None
    """The executions' digests then (``state_key.ExecutionDigests``), to go on from."""


@dataclass(frozen=True)
class ChoiceRecord:
    """One choice of a schedule: its kind, the option taken, and how many there were."""

    kind: str
    index: int
    count: int
    option: Option


@dataclass(frozen=True)
class StepRecord:
    """One step of a schedule.

    ``choice`` is the index of the ready choice that picked it (-1 when it was the only
    option): never one of the waiter or fault choices made while it ran.
    """

    index: int
    name: Option
    choice: int
    first_seen: int
    time_ns: int
    footprint: Footprint
    state: StateKey
    label: str
    events: tuple[Event, ...]
    fingerprint: str | None = None
    keys: Keys | None = None


@dataclass(frozen=True)
class Found:
    """A violated check: which, what, and at which step (-1: at the start commit)."""

    check: str
    message: str
    step: int


@dataclass
class ScheduleResult:
    """Everything the strategies read back from one schedule."""

    choices: list[ChoiceRecord] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    outcome: str = "terminal"
    found: Found | None = None
    initial: StateKey | None = None
    engine: Engine | None = None
    captured: Resume | None = None

    @property
    def trace(self) -> tuple[int, ...]:
        """The choices as indices: replaying them reproduces this schedule."""
        return tuple(c.index for c in self.choices)

    @property
    def final(self) -> StateKey | None:
        """The last state reached."""
        return self.steps[-1].state if self.steps else self.initial
