"""Stateful search: expand each distinct state once, breadth first (``strategy="stateful"``).

A state is held by a ``StateHandle``: the choice trace that reaches it. Restoring it re-runs
that trace from the start (the engine has no snapshot to restore yet), then runs one more
step under every combination of the choices that step offers (which ready unit, which waiter,
whether a budgeted fault fires), so each successor is one transition. Successors are keyed by
their exact fingerprint (``explore.fingerprint``: the Flow run, the scheduler, the faults and
actions left, every monitor's state); a state without a fingerprint is never merged.

Levels are expanded in order and merged in the order their states were found, so the first
violation met is one with the fewest steps, and the verdict, the counts and the counterexample
do not depend on how many workers expanded the level (``explore.parallel``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from dexviz.engine.engine_state import SnapshotError
from dexviz.explore.canonical import Keys
from dexviz.explore.report import GRAPH_KEEP, StateGraph
from dexviz.explore.schedule import Bench, run_schedule
from dexviz.explore.schedule_records import Option, Resume, ScheduleResult, Setup, StepRecord
from dexviz.explore.state_key import StateKey

SEEN_SET = "seen-set"
NUMBERING = "canonical numbering"
SYMMETRY = "symmetry"
REDUCTION_NAMES = (SEEN_SET, NUMBERING, SYMMETRY)
"""The reductions that merge states, weakest first; "states pruned" are counted by each."""

__all__ = [
    "Expander",
    "Expansion",
    "Frontier",
    "LocalExpander",
    "SnapshotRef",
    "StateHandle",
    "Successor",
    "expand",
    "search", "walk",
]


@dataclass(frozen=True)
class SnapshotRef:
    """A snapshot kept by worker process ``worker`` as its ``number``, taken after ``depth`` steps.

    A state sent to that worker is restored from it without shipping it
    (``explore.affine_pool``).
    """

    worker: int
    number: int
    depth: int


@dataclass(frozen=True)
class StateHandle:
    """A state: the choice trace that reaches it after ``depth`` steps, and how to get back.

    ``base`` is the nearest state on the way (this one, or an ancestor) that the engine could
    snapshot, reached after the first ``base_choices`` choices of ``trace``: restoring
    restores that snapshot and replays only the rest of the trace. Without one (every state
    since the start had a coroutine handler in flight, a monitor that cannot be pickled, or
    a Flow the snapshot cannot hold) the whole trace is replayed from the start.
    """

    trace: tuple[int, ...]
    depth: int
    base: Resume | SnapshotRef | None = None
    base_choices: int = 0
    fingerprint: str | None = None

    def restore(
        self,
        setup: Setup,
        suffix: tuple[int, ...] = (),
        bench: Bench | None = None,
        known: Callable[[str], bool] | None = None,
    ) -> ScheduleResult:
        """Run to this state (and ``suffix``), then one step more at most, snapshotting it.

        No snapshot when ``known`` says the successor's fingerprint was seen: it will not be
        expanded.
        """
        cut = _cut(setup, self.depth + 1)
        policy = _ExpandPolicy(self.trace[self.base_choices :] + suffix, self.depth, known)
        base = self.base
        if isinstance(base, SnapshotRef):
            raise RuntimeError(f"{base} is held by a worker process: restore it there")
        return run_schedule(cut, policy, resume=base, capture=self.depth, bench=bench)

    def __reduce__(self) -> tuple[Any, ...]:
        # Sent to a worker: a snapshot that cannot be pickled (a canceled coroutine Task still
        # unwinding, say) is dropped, and the worker replays the trace from the start.
        base, choices = self.base, self.base_choices
        if isinstance(base, Resume):
            try:
                base.snapshot.data  # noqa: B018 - pickles it once, or fails
            except SnapshotError:
                base, choices = None, 0
        return (StateHandle, (self.trace, self.depth, base, choices, self.fingerprint))

    @property
    def offset(self) -> int:
        """The depth the restore starts at: steps before it are not in its result."""
        return 0 if self.base is None else self.base.depth


_CUTS: dict[tuple[int, int], tuple[Setup, Setup]] = {}


def _cut(setup: Setup, depth: int) -> Setup:
    """``setup`` bounded at ``depth`` steps, made once per setup and depth."""
    found = _CUTS.get((id(setup), depth))
    if found is None or found[0] is not setup:
        if len(_CUTS) >= 10_000:
            _CUTS.clear()
        # The setup is kept with its cut, so its id is not reused while the entry lives.
        found = _CUTS[(id(setup), depth)] = (setup, dataclasses.replace(setup, max_depth=depth))
    return found[1]


class _ExpandPolicy:
    """Follows a forced trace, then takes first options; fingerprints only the last step."""

    prunes = True
    canonical = True
    footprints = False
    """The search keeps no sleep sets: a step's footprint is never read."""

    def __init__(
        self, forced: tuple[int, ...], depth: int, known: Callable[[str], bool] | None = None
    ) -> None:
        self.forced = forced
        self.depth = depth
        self.position = 0
        self.known = known

    def choose(self, kind: str, options: tuple[Option, ...]) -> int | None:
        """The forced index while it lasts, then the first option."""
        position, self.position = self.position, self.position + 1
        return self.forced[position] if position < len(self.forced) else 0

    def stepped(self, step: StepRecord) -> None:
        """Nothing to learn: the search keeps its own seen-set."""

    def wants_fingerprint(self, step: int) -> bool:
        """Only the successor (the step after the restored state) is fingerprinted."""
        return step == self.depth

    def wants_state(self, step: int) -> bool:
        """The canonical states of the restored state and its successor only."""
        return step >= self.depth - 1

    def revisit(self, step: StepRecord, describe: object) -> bool:
        """Never stop a replay early: the step after the restored state is the successor."""
        return False


@dataclass(frozen=True)
class Successor:
    """One transition out of a state: the trace to the new state and what the step did."""

    handle: StateHandle
    fingerprint: str | None
    state: StateKey
    label: str
    outcome: str
    violated: bool
    keys: Keys | None = None


@dataclass(frozen=True)
class Expansion:
    """A state's successors, or, when it has none, how its run ended."""

    handle: StateHandle
    at: StateKey | None
    successors: tuple[Successor, ...]
    outcome: str
    violated: bool


def expand(
    setup: Setup,
    handle: StateHandle,
    bench: Bench | None = None,
    known: Callable[[str], bool] | None = None,
    found: set[str] | None = None,
) -> Expansion:
    """Every transition out of ``handle``'s state: one restore per combination of choices.

    ``bench``: the engine to restore into (one per process, reused for every expansion);
    ``known`` says which successors are not snapshotted (see ``StateHandle.restore``);
    ``found`` gets the fingerprint of each successor, as it is reached.
    """
    offset, own = handle.offset, len(handle.trace) - handle.base_choices
    suffix: tuple[int, ...] = ()
    successors: list[Successor] = []
    while True:
        result = handle.restore(setup, suffix, bench, known)
        at = (
            result.steps[handle.depth - offset - 1].state
            if handle.depth > offset
            else (result.initial)
        )
        if len(result.steps) <= handle.depth - offset:
            # No step was possible: a terminal state (the end checks ran) or a stall.
            return Expansion(handle, at, (), result.outcome, result.found is not None)
        step = result.steps[handle.depth - offset]
        taken = result.choices[own:]
        trace = handle.trace + tuple(c.index for c in taken)
        captured = result.captured
        key = step.fingerprint
        if found is not None and key is not None:
            found.add(key)
        if captured is None:
            successor = StateHandle(
                trace, handle.depth + 1, handle.base, handle.base_choices, key
            )
        else:
            successor = StateHandle(trace, handle.depth + 1, captured, len(trace), key)
        successors.append(
            Successor(
                successor,
                step.fingerprint,
                step.state,
                step.label,
                result.outcome,
                result.found is not None,
                step.keys,
            )
        )
        suffix = _next_suffix([(c.index, c.count) for c in taken])
        if not suffix:
            return Expansion(handle, at, tuple(successors), "expanded", False)


def _next_suffix(taken: Iterable[tuple[int, int]]) -> tuple[int, ...]:
    """The odometer's next combination: bump the deepest choice with options left."""
    choices = list(taken)
    for position in range(len(choices) - 1, -1, -1):
        index, count = choices[position]
        if index + 1 < count:
            return (*(i for i, _ in choices[:position]), index + 1)
    return ()


class Expander(Protocol):
    """Expands a level of states, returning their expansions in the order given."""

    workers: int

    def expand_all(self, handles: Sequence[StateHandle]) -> list[Expansion]:
        """``expand`` of each handle, in order."""


class LocalExpander:
    """Expands in this process."""

    workers = 1

    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self.bench = Bench(setup)
        self.known: Callable[[str], bool] | None = None
        """The search's seen-set, when it runs in this process: no snapshot of what it holds."""

    def expand_all(self, handles: Sequence[StateHandle]) -> list[Expansion]:
        """``expand`` of each handle, one after the other.

        A successor whose fingerprint an earlier one of this level had is not snapshotted:
        the levels are merged in this order, so the earlier one is the state expanded (or
        bounded) and this one is merged into it. Most merges are of such siblings and
        cousins (two orders of the same steps), which ``known`` (the states of the levels
        merged before) cannot tell yet.
        """
        known, found = self.known, set[str]()

        def seen(key: str) -> bool:
            return key in found or (known is not None and known(key))

        return [expand(self.setup, handle, self.bench, seen, found) for handle in handles]


@dataclass
class Frontier:
    """What the breadth-first search has seen, found and counted so far."""

    seen: set[str] = field(default_factory=set)
    seen_numbered: set[str] = field(default_factory=set)
    seen_exact: set[str] = field(default_factory=set)
    unkeyed: int = 0
    transitions: int = 0
    merged: int = 0
    pruned_by: dict[str, int] = field(default_factory=lambda: dict.fromkeys(REDUCTION_NAMES, 0))
    frontier: int = 0
    depth: int = 0
    depth_bounded: int = 0
    terminal: set[str] = field(default_factory=set)
    states: set[str] = field(default_factory=set)
    violation: tuple[int, ...] | None = None
    graph: StateGraph | None = field(default_factory=StateGraph)

    @property
    def distinct(self) -> int:
        """Distinct states: fingerprinted ones plus every one that had no fingerprint."""
        return len(self.seen) + self.unkeyed

    def admit(self, parent: str, successor: Successor) -> bool:
        """Count a transition; True when its state is new and must be expanded."""
        self.transitions += 1
        self.states.add(successor.state.digest)
        if self.graph is not None:
            state = successor.state
            self.graph.statuses.setdefault(state.digest, state.status)
            self.graph.depths.setdefault(state.digest, successor.handle.depth)
            if parent != state.digest:
                self.graph.edges.setdefault((parent, state.digest), successor.label)
            if successor.violated:
                self.graph.violating.add(successor.state.digest)
            if len(self.graph) > GRAPH_KEEP:
                self.graph = None
        if successor.violated:
            if self.violation is None:
                self.violation = successor.handle.trace
            return False
        key = successor.fingerprint
        if key is None:
            self.unkeyed += 1
            return True
        keys = successor.keys
        if key in self.seen:
            self.merged += 1
            self.pruned_by[self._reduction(keys)] += 1
            return False
        self.seen.add(key)
        if keys is not None:
            self.seen_numbered.add(keys.numbered)
            self.seen_exact.add(keys.exact)
        return True

    def _reduction(self, keys: Keys | None) -> str:
        """Which reduction merged a transition: the weakest whose key was seen already."""
        if keys is None or keys.exact in self.seen_exact:
            return SEEN_SET
        if keys.numbered in self.seen_numbered:
            return NUMBERING
        return SYMMETRY


def search(
    expander: Expander,
    frontier: Frontier,
    max_depth: int,
    stop: Callable[[Frontier], str | None],
) -> str | None:
    """Breadth first from the start state; the reason it stopped early, or None when done."""
    level = [StateHandle((), 0)]
    if isinstance(expander, LocalExpander):
        expander.known = frontier.seen.__contains__
    while level:
        frontier.depth = level[0].depth
        nxt: list[StateHandle] = []
        for expansion in expander.expand_all(level):
            _merge(frontier, expansion, nxt, max_depth)
            if frontier.violation is not None:
                return "violation"
        frontier.frontier = len(nxt)
        reason = stop(frontier)
        if reason is not None:
            return reason
        level = nxt
    return None


def _merge(
    frontier: Frontier, expansion: Expansion, nxt: list[StateHandle], max_depth: int
) -> None:
    at = expansion.at
    digest = "" if at is None else at.digest
    if at is not None:
        frontier.states.add(digest)
    if expansion.handle.depth == 0:
        _start(frontier, at)
    if not expansion.successors:
        _end(frontier, expansion, digest)
        return
    for successor in expansion.successors:
        if frontier.admit(digest, successor):
            if successor.handle.depth >= max_depth:
                frontier.depth_bounded += 1
            else:
                nxt.append(successor.handle)
        if frontier.violation is not None:
            return


def _start(frontier: Frontier, at: StateKey | None) -> None:
    frontier.unkeyed += 1  # the start state: expanded once, never reached again by a key
    if frontier.graph is not None and at is not None:
        frontier.graph.initial.add(at.digest)
        frontier.graph.statuses.setdefault(at.digest, at.status)


def _end(frontier: Frontier, expansion: Expansion, digest: str) -> None:
    if expansion.violated:
        frontier.violation = expansion.handle.trace
        if frontier.graph is not None:
            frontier.graph.violating.add(digest)
    elif expansion.outcome == "terminal" and expansion.at is not None:
        frontier.terminal.add(digest)


def walk(
    setup: Setup, expander: Expander | None = None, max_states: int | None = None
) -> Iterator[Expansion]:
    """Every distinct state's expansion, breadth first from the start: the state graph.

    The reusable core of the stateful search (liveness checks build on it). Each yielded
    ``Expansion`` is one state (``handle.fingerprint``: its canonical fingerprint; None for
    the start and for a state that has none, which is never merged) with every transition
    out of it (``successors``, each with the fingerprint and ``StateKey`` of the state it
    reaches and the step's label); a state with no successors ended (``outcome``: terminal,
    or a stall). Violating successors are yielded but not expanded. States are expanded once
    each, levels in order, by ``expander`` (default: this process); ``max_states`` stops the
    walk after that many expansions.
    """
    seen: set[str] = set()
    level = [StateHandle((), 0)]
    count = 0
    local = expander or LocalExpander(setup)
    while level:
        nxt: list[StateHandle] = []
        for expansion in local.expand_all(level):
            yield expansion
            count += 1
            if max_states is not None and count >= max_states:
                return
            for successor in expansion.successors:
                key = successor.fingerprint
                if successor.violated or key in seen or successor.handle.depth >= setup.max_depth:
                    continue
                if key is not None:
                    seen.add(key)
                nxt.append(successor.handle)
        level = nxt
