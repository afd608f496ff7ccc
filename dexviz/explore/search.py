"""Exhaustive search: ``"dfs"`` (every schedule) and ``"dpor"`` (one schedule per class).

Both are stateless: each schedule is a fresh simulation re-run along a forced prefix of
choices, then extended with first options; the choice tree is walked depth first.

``"dfs"`` tries every option at every choice point. ``"dpor"`` is Flanagan and Godefroid's
dynamic partial-order reduction with sleep sets: after each schedule it finds the races — two
dependent steps (``Footprint.depends_on``) not ordered by happens-before (a unit happens after
the step that created it; every unit run at a later virtual instant happens after every unit
run at an earlier one; a client action, ready at any instant, is ordered only by dependence) —
and adds the reversed order as a backtrack point where the later step's unit was already ready.
Only backtrack points are explored, and an option whose step commutes with everything run
since it was explored (a sleep set) is not tried again. Waiter and fault choices inside a step
are always explored in full.

Canonical state hashes (``explore.state_key``) count the distinct states met, draw the state graph
and compare terminal states. Pruning uses exact fingerprints instead (``explore.fingerprint``):
with ``prune=True`` a schedule stops at a state whose future was explored already
(``explore.visits``); for ``"dpor"`` the visit keeps a summary of the footprints run below the
state, so a path pruned there still gets the backtrack points of its races with them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from dexviz.explore.footprint import Footprint
from dexviz.explore.schedule_records import Option, ScheduleResult, StepRecord
from dexviz.explore.visits import Summary, Visit, Visits


class NondeterminismError(RuntimeError):
    """A replay met different options than the first run: the Flow is not deterministic."""


@dataclass
class Node:
    """One choice point of the current path and what is left to explore there."""

    kind: str
    options: tuple[Option, ...]
    chosen: int
    sleep: dict[Option, Footprint] = field(default_factory=dict)
    done: dict[Option, Footprint] = field(default_factory=dict)
    footprints: dict[Option, Footprint] = field(default_factory=dict)
    backtrack: set[int] = field(default_factory=set)
    tried: set[int] = field(default_factory=set)


class TreePolicy:
    """Follows the stack's choices, then extends it with new nodes (the DFS frontier)."""

    def __init__(self, stack: list[Node], reduce: bool, visits: Visits | None = None) -> None:
        self.stack = stack
        self.reduce = reduce
        self.visits = visits
        self.prunes = visits is not None
        self.stopped_at: Visit | None = None
        self.depth = 0
        self.sleep: dict[Option, Footprint] = {}
        self._carry: dict[Option, Footprint] = {}
        self._node: Node | None = None

    def choose(self, kind: str, options: tuple[Option, ...]) -> int | None:
        """The stack's choice at this depth, or the first option not asleep at a new node."""
        depth = self.depth
        if depth < len(self.stack):
            node = self.stack[depth]
            if node.kind != kind or node.options != options:
                raise NondeterminismError(
                    f"choice {depth} offered {kind} {options!r}, earlier {node.kind} "
                    f"{node.options!r}: a handler depends on something outside the engine "
                    "(random numbers, the wall clock, global state)"
                )
        else:
            new = self._new_node(kind, options)
            if new is None:
                return None
            node = new
            self.stack.append(node)
        self.depth += 1
        if kind == "ready":
            self._enter(node)
        return node.chosen

    def _new_node(self, kind: str, options: tuple[Option, ...]) -> Node | None:
        if kind != "ready":
            return Node(kind, options, 0, backtrack=set(range(len(options))), tried={0})
        sleep = dict(self.sleep) if self.reduce else {}
        free = [i for i, option in enumerate(options) if option not in sleep]
        if not free:
            return None
        backtrack = {free[0]} if self.reduce else set(range(len(options)))
        return Node(kind, options, free[0], sleep=sleep, backtrack=backtrack)

    def _enter(self, node: Node) -> None:
        chosen = node.options[node.chosen]
        carry = dict(node.sleep)
        carry.update((k, v) for k, v in node.done.items() if k != chosen)
        self._carry = carry
        self._node = node

    def stepped(self, step: StepRecord) -> None:
        """Note the step's footprint at its node and carry the sleep set past it."""
        node, self._node = self._node, None
        carry, self._carry = (self._carry, {}) if node is not None else (self.sleep, {})
        if node is not None:
            known = node.footprints.get(step.name)
            node.footprints[step.name] = step.footprint if known is None else known | step.footprint
        if self.reduce:
            self.sleep = {k: v for k, v in carry.items() if not v.depends_on(step.footprint)}


    def revisit(self, step: StepRecord, describe: Callable[[Option], str | None]) -> bool:
        """Whether the state after ``step`` was explored already (stop: it is pruned)."""
        visits, key = self.visits, step.fingerprint
        if visits is None or key is None or visits.on_path(step.index):
            return False
        asleep = frozenset(d for d in map(describe, self.sleep) if d is not None)
        if "?" in asleep:
            return False
        found = visits.hit(key, step.index, asleep)
        if found is not None:
            self.stopped_at = found
            return True
        visits.enter(Visit(key, step.index, self.depth, asleep, Summary(step.time_ns)))
        return False


def add_summary_races(stack: list[Node], steps: list[StepRecord], summary: Summary) -> None:
    """Give back every option of each step that may race with what ran below a pruned state."""
    for step in steps:
        if step.choice >= 0 and summary.races(step):
            node = stack[step.choice]
            node.backtrack.update(range(len(node.options)))


def add_races(stack: list[Node], steps: list[StepRecord]) -> None:
    """Add a backtrack point for every race of the schedule (Flanagan-Godefroid)."""
    before: list[int] = []
    races: list[tuple[int, int]] = []
    barrier = units = 0
    for j, step in enumerate(steps):
        if j and step.time_ns > steps[j - 1].time_ns:
            barrier = units
        # A client action is ready at every instant: no time barrier orders it, either way.
        action = step.first_seen < 0
        mask = 0 if action else barrier
        if step.first_seen >= 1:
            mask |= before[step.first_seen - 1]
        footprint = step.footprint
        if footprint.writes or footprint.reads:
            for i in range(j - 1, -1, -1):
                if (mask >> i) & 1:
                    continue
                if steps[i].footprint.depends_on(footprint):
                    races.append((i, j))
                    mask |= before[i]
        before.append(mask | (1 << j))
        if not action:
            units |= 1 << j
    for i, j in races:
        _reverse(stack, steps, before, i, j)


def _reverse(
    stack: list[Node], steps: list[StepRecord], before: list[int], i: int, j: int
) -> None:
    if steps[i].choice < 0:
        return
    node = stack[steps[i].choice]
    if steps[j].name in node.options:
        node.backtrack.add(node.options.index(steps[j].name))
        return
    # Some step leading to j (not after i) whose unit was already ready at i.
    for k in range(i + 1, j):
        if (before[j] >> k) & 1 and not (before[k] >> i) & 1 and steps[k].name in node.options:
            node.backtrack.add(node.options.index(steps[k].name))
            return
    node.backtrack.update(range(len(node.options)))


def advance(stack: list[Node], on_prune: Callable[[int], None]) -> bool:
    """Move the deepest node with something left to its next option; False when done."""
    while stack:
        node = stack[-1]
        if node.kind == "ready":
            option = node.options[node.chosen]
            node.done[option] = node.footprints.get(option, Footprint.everything())
            for index in sorted(node.backtrack):
                candidate = node.options[index]
                if candidate not in node.done and candidate not in node.sleep:
                    node.chosen = index
                    return True
            on_prune(len(node.options) - len(node.done))
        else:
            left = [i for i in range(len(node.options)) if i not in node.tried]
            if left:
                node.chosen = left[0]
                node.tried.add(left[0])
                return True
        stack.pop()
    return False


def schedule_done(
    result: ScheduleResult, stack: list[Node], reduce: bool, policy: TreePolicy | None = None
) -> None:
    """After a schedule: find its races (dpor) so that backtracking can reverse them.

    With state pruning (``policy.visits``), the open visits take the schedule's steps, and a
    schedule stopped at a visited state adds the races of what ran below it.
    """
    if reduce:
        add_races(stack, result.steps)
    visits = None if policy is None else policy.visits
    if visits is None or policy is None:
        return
    stopped = policy.stopped_at
    visits.schedule_ran(result.steps, stopped, result.outcome == "depth")
    if stopped is not None:
        visits.pruned += 1
        if reduce:
            add_summary_races(stack, result.steps, stopped.summary)
