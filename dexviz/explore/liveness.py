"""Liveness: prove that every fair run of a Flow closes, or show one that never does.

``explore_liveness(flow, input, check=checks.eventually_closes())`` builds the reachable state
graph (``explore.state_graph``, states compared up to execution numbering and a shift in
virtual time, so a Flow that loops forever has a finite graph) and looks for the two ways a
run can stay open forever:

- a *stall*: a state with nothing left to run (no ready unit, no timer, no client action) in
  which the run is still open — what ``checks.terminates()`` reports, in the same words;
- a *fair livelock*: a cycle of open states that a weakly fair scheduler may stay on forever,
  that is, a strongly connected component in which every option enabled in all of its states
  (a ready unit, a client action) is taken on one of its edges (``explore.fairness``). A cycle
  that only exists because some continuously ready unit never gets its turn is ruled out.

A livelock is reported as a lasso (``explore.lasso``): the steps to the loop, then the loop,
replayed concretely twice around in a fresh engine, so ``violation.replay()`` opens in the
Debugger at the loop's first step. The graph is bounded by ``max_states``: a search that
reaches it says so ("inconclusive"), it is never a proof.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dexviz.engine.core.choice import FaultBudget
from dexviz.engine.engine import as_registry
from dexviz.explore.actions import Action
from dexviz.explore.check_names import validate_names
from dexviz.explore.checks import LivenessCheck, View, eventually_closes
from dexviz.explore.fairness import components, is_fair, loop_through
from dexviz.explore.lasso import Lasso, resolve
from dexviz.explore.live_state import live_key
from dexviz.explore.report import GRAPH_LIMIT, ExplorationReport, StateGraph
from dexviz.explore.schedule_records import DEFAULT_MAX_DEPTH, ChoiceRecord, Setup
from dexviz.explore.state_driver import Driver
from dexviz.explore.state_graph import Node, StateGraphSearch
from dexviz.explore.violation import Violation, replay
from dexviz.history._plural import plural
from dexviz.sdk.flow import Flow
from dexviz.sdk.registry import Registry

__all__ = [
    "DEFAULT_MAX_STATES",
    "LivenessCounts",
    "LivenessReport",
    "explore_liveness",
    "loop_keys",
]

DEFAULT_MAX_STATES = 20_000
"""States the graph may hold when no ``max_states`` is given."""


@dataclass(frozen=True)
class LivenessCounts:
    """What a liveness search counted.

    Attributes:
        states: Distinct states in the graph (states with no key each count once).
        expanded: States whose every transition was run.
        transitions: Steps run out of expanded states.
        cycles: Strongly connected components with a cycle among the open states.
        unfair_cycles: Of those, the ones fairness rules out (some continuously ready unit
            never runs on them).
        max_states: The bound on states.
        bound_reached: Whether some state was left out because of a bound.
        bound: Which bound, in words (None when none was reached).
    """

    states: int
    expanded: int
    transitions: int
    cycles: int
    unfair_cycles: int
    max_states: int
    bound_reached: bool
    bound: str | None = None


@dataclass(frozen=True)
class LivenessReport(ExplorationReport):
    """The outcome of ``explore_liveness``: proven, violated (with a lasso), or inconclusive."""

    liveness: LivenessCounts | None = None

    def verdict(self) -> str:
        """One line: proven, violated, or inconclusive because the bound was reached."""
        counts = self.liveness
        if self.violations or counts is None:
            return super().verdict()
        checks = ", ".join(self.checks)
        if counts.bound_reached:
            return (f"INCONCLUSIVE {checks}: bound reached ({counts.bound}); no "
                    "stall or fair livelock among the states explored, not a proof")  # fmt: skip
        ruled = f", {plural(counts.unfair_cycles, 'cycle')} ruled out by fairness"
        return (f"PROVEN {checks} under fair scheduling ({plural(counts.states, 'state')}"
                f"{ruled if counts.unfair_cycles else ''})")  # fmt: skip

    def counts(self) -> str:
        """One line: states, transitions and cycles of the graph."""
        counts = self.liveness
        if counts is None:
            return super().counts()
        return (f"{plural(counts.states, 'state')}, {plural(counts.transitions, 'transition')}, "
                f"{plural(counts.cycles, 'cycle')} ({counts.unfair_cycles} unfair)")  # fmt: skip

    def __repr__(self) -> str:
        counts = self.liveness
        states = counts.states if counts is not None else self.distinct_states
        return (f"LivenessReport(checks={list(self.checks)}, states={states}, "
                f"proven={self.proven}, violations={len(self.violations)})")  # fmt: skip

    def summary(self) -> Mapping[str, Any]:
        """The counts as a plain mapping (for tables and JSON)."""
        counts = self.liveness
        if counts is None:
            return super().summary()
        return {
            "strategy": self.strategy, "distinct_states": counts.states,
            "states_expanded": counts.expanded, "transitions": counts.transitions,
            "cycles": counts.cycles, "unfair_cycles": counts.unfair_cycles,
            "max_states": counts.max_states, "bound_reached": counts.bound_reached,
            "exhaustive": self.exhaustive, "violations": len(self.violations),
            "wall_time_s": round(self.wall_time_s, 3),
        }  # fmt: skip


def explore_liveness(
    flow_or_flows: Flow[Any] | Sequence[Flow[Any]] | Registry,
    input: Any = None,
    *,
    check: LivenessCheck | Sequence[LivenessCheck] | None = None,
    actions: Sequence[Action] = (),
    faults: FaultBudget | None = None,
    max_states: int = DEFAULT_MAX_STATES,
    flow: Any = None,
    flow_id: str = "flow-1",
) -> LivenessReport:
    """Prove that every fair run of ``flow`` with ``input`` reaches each check's goal.

    Args:
        flow_or_flows: The Flow (or Flows, or a Registry; ``flow=`` picks the one to start).
        input: The start input.
        check: ``checks.eventually_closes()`` (the default), ``checks.eventually(predicate)``,
            or a list of them.
        actions: Client calls that may land between any two steps (each is an option, and
            weakly fair like a ready unit: a call that can always land eventually does).
        faults: A FaultBudget of failures that may be injected at any attempt it covers.
        max_states: The bound on distinct states; reaching it makes the result inconclusive.
        flow: The Flow to start when ``flow_or_flows`` holds several (default: the first).
        flow_id: The id the Flow is started with.

    Returns:
        A LivenessReport: ``proven``, or ``violations[0]`` with its lasso (or its stall), whose
        ``replay()`` re-runs it in a fresh engine.
    """
    started = time.perf_counter()
    setup = _setup(flow_or_flows, input, check, actions, faults, max_states, flow, flow_id)
    checks = tuple(c for c in setup.checks if isinstance(c, LivenessCheck))
    driver = Driver(setup, [c.goal for c in checks])
    search = StateGraphSearch(driver, max_states)
    found: list[Violation] = []
    marked: set[int] = set()
    cycles = unfair = 0
    try:
        search.run()
        for position, liveness_check in enumerate(checks):
            violation, where, seen, ruled = _analyse(search, driver, setup, position,
                                                     liveness_check)  # fmt: skip
            cycles, unfair = max(cycles, seen), max(unfair, ruled)
            if violation is not None:
                found.append(violation)
                marked.update(where)
    finally:
        driver.close()
    nodes = search.nodes
    counts = LivenessCounts(len(nodes), sum(n.expanded for n in nodes), search.transitions,
                            cycles, unfair, max_states, search.bounded, search.bound)  # fmt: skip
    terminal = frozenset(n.key or f"n{n.index}" for n in nodes if n.terminal)
    return LivenessReport(
        "liveness", counts.expanded, len(nodes), 0, not search.bounded,
        time.perf_counter() - started, tuple(found), terminal, tuple(c.name for c in checks),
        stopped_by="max_states" if search.bounded else None, graph=_graph(nodes, marked),
        liveness=counts,
    )  # fmt: skip


def _setup(
    flow_or_flows: Any,
    input: Any,
    check: Any,
    actions: Sequence[Action],
    faults: FaultBudget | None,
    max_states: int,
    flow: Any,
    flow_id: str,
) -> Setup:
    registry = as_registry(flow_or_flows)
    if flow is None:
        flow = flow_or_flows if isinstance(flow_or_flows, Flow) else registry.definitions[0].flow
    given = [eventually_closes()] if check is None else (
        list(check) if isinstance(check, (list, tuple)) else [check])  # fmt: skip
    if not given:
        raise ValueError("explore_liveness needs at least one check")
    for item in given:
        if not isinstance(item, LivenessCheck):
            name = getattr(item, "name", getattr(item, "__name__", repr(item)))
            raise ValueError(
                f"explore_liveness proves liveness checks (checks.eventually_closes(), "
                f"checks.eventually(predicate)); {name} is not one: give it to explore()"
            )
    for action in actions:
        if not isinstance(action, Action):
            raise TypeError(f"actions take Action values (Action.publish(...)), got {action!r}")
    if faults is not None and not isinstance(faults, FaultBudget):
        raise TypeError(f"faults takes a FaultBudget (FaultBudget.of(Step)), got {faults!r}")
    if isinstance(max_states, bool) or not isinstance(max_states, int) or max_states < 1:
        raise ValueError(f"max_states must be a whole number >= 1, got {max_states!r}")
    validate_names(given, faults, registry)
    return Setup(registry=registry, flow=flow, input=input, flow_id=flow_id, checks=tuple(given),
                 actions=tuple(actions), budget=faults, max_depth=DEFAULT_MAX_DEPTH,
                 dependent_always=False)  # fmt: skip


def _analyse(
    search: StateGraphSearch, driver: Driver, setup: Setup, position: int, check: LivenessCheck
) -> tuple[Violation | None, tuple[int, ...], int, int]:
    """The shallowest stall or fair livelock of one check, its states; cycles seen, unfair."""
    nodes = search.nodes

    def inside(node: Node) -> bool:
        return node.expanded and not node.goals[position]

    reachable = _reachable(nodes, inside)
    found = components(nodes, lambda n: n.index in reachable)
    fair = [c for c in found if is_fair(nodes, c)]
    stalls = [n.index for n in nodes if n.index in reachable and n.terminal]
    best_stall = min(stalls, key=lambda i: nodes[i].depth, default=None)
    best_loop = min(fair, key=lambda c: min(nodes[i].depth for i in c), default=None)
    unfair = len(found) - len(fair)
    replay_setup = _replay_setup(setup, check)
    if best_stall is not None and (
        best_loop is None or nodes[best_stall].depth <= min(nodes[i].depth for i in best_loop)
    ):
        stall = _stall(search, driver, replay_setup, check, best_stall)
        return stall, (best_stall,), len(found), unfair
    if best_loop is not None:
        livelock = _livelock(search, driver, replay_setup, check, best_loop)
        return livelock, tuple(best_loop), len(found), unfair
    return None, (), len(found), unfair


def _reachable(nodes: Sequence[Node], inside: Any) -> set[int]:
    """Nodes reached from the start through states where the goal does not hold."""
    if not nodes or not inside(nodes[0]):
        return set()
    seen = {0}
    stack = [0]
    while stack:
        for edge in nodes[stack.pop()].edges:
            if edge.target not in seen and inside(nodes[edge.target]):
                seen.add(edge.target)
                stack.append(edge.target)
    return seen


def _replay_setup(setup: Setup, check: LivenessCheck) -> Setup:
    return dataclasses.replace(setup, checks=(check,))


def _stall(
    search: StateGraphSearch, driver: Driver, setup: Setup, check: LivenessCheck, index: int
) -> Violation:
    """A run that stops open: the path to it, as an ordinary (replayable) trace."""
    path = search.path_to(index)
    driver.goto(search.nodes[index].point)
    view = View(driver.engine, setup.flow_id)
    message = check.monitor().at_end(view, True) or f"{check.name} never holds"
    records = [c for edge in path for c in edge.choices]
    return _violation(setup, check, message, records, [e.label for e in path], None)


def _livelock(
    search: StateGraphSearch,
    driver: Driver,
    setup: Setup,
    check: LivenessCheck,
    component: Sequence[int],
) -> Violation:
    """A fair loop of open states, as a lasso replayed concretely."""
    nodes = search.nodes
    start = min(component, key=lambda i: (nodes[i].depth, i))
    prefix = search.path_to(start)
    loop = loop_through(nodes, component, start)
    records, rounds = resolve(driver, nodes, prefix, loop, start)
    prefix_choices = sum(len(e.choices) for e in prefix)
    lasso = Lasso(tuple(e.label for e in prefix), tuple(e.label for e in loop), prefix_choices,
                  tuple(rounds))  # fmt: skip
    goal = "closes" if check.predicate is None else f"reaches {check.name}"
    message = (f"a fair run can loop forever and never {goal}: after {len(prefix)} steps, "
               f"a loop of {plural(len(loop), 'step')} repeats")  # fmt: skip
    steps = [e.label for e in prefix] + [e.label for e in loop]
    return _violation(setup, check, message, records, steps, lasso)


def _violation(
    setup: Setup,
    check: LivenessCheck,
    message: str,
    records: list[ChoiceRecord],
    steps: list[str],
    lasso: Lasso | None,
) -> Violation:
    trace = tuple(c.index for c in records)
    return Violation(check.name, message, trace, tuple(records), tuple(steps), len(steps), 0,
                     setup, lasso)  # fmt: skip


def _graph(nodes: Sequence[Node], marked: set[int]) -> StateGraph | None:
    """The state graph for the report, the violations' states red (None above its limit)."""
    if len(nodes) > GRAPH_LIMIT:
        return None
    graph = StateGraph()
    names = {n.index: n.key or f"n{n.index}" for n in nodes}
    for node in nodes:
        graph.statuses[names[node.index]] = node.status
        for edge in node.edges:
            if edge.target != node.index:
                graph.edges.setdefault((names[node.index], names[edge.target]), edge.label)
    if nodes:
        graph.initial.add(names[0])
    graph.violating.update(names[i] for i in marked)
    return graph


def loop_keys(violation: Violation) -> tuple[str | None, ...]:
    """A lasso's liveness state key at the loop's start and after each round, re-run concretely.

    All equal when the loop really comes back to where it started (what a lasso promises).
    """
    lasso = violation.lasso
    if lasso is None:
        raise ValueError(f"{violation!r} is not a lasso: it has no loop")
    keys: list[str | None] = []
    for rounds in range(lasso.rounds + 1):
        depth = len(lasso.prefix) + rounds * len(lasso.loop)
        cut = dataclasses.replace(violation.setup, max_depth=depth)
        engine = replay(cut, violation.trace, keep_engine=True).engine
        assert engine is not None
        keys.append(live_key(engine.runtime))
        engine.close()
    return tuple(keys)
