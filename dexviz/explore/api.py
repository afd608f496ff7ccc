"""``dexviz.explore``: run a small Flow under every interleaving and check properties.

Every schedule is a fresh simulation whose open choices — which ready unit runs, which waiter a
message goes to, whether a budgeted failure fires, when a client action lands — are made by the
strategy instead of a seed. Checks run after every commit and at the end; the first violation
is shrunk to its shortest trace.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dexviz.engine.core.choice import FaultBudget
from dexviz.engine.engine import as_registry
from dexviz.explore.actions import Action
from dexviz.explore.check_names import validate_names
from dexviz.explore.checks import Check, LivenessCheck, as_check
from dexviz.explore.liveness import DEFAULT_MAX_STATES, explore_liveness
from dexviz.explore.parallel import default_workers
from dexviz.explore.progress import Progress
from dexviz.explore.randomized import PctBound, PctPolicy, RandomPolicy
from dexviz.explore.report import GRAPH_KEEP, ExplorationReport, StateGraph
from dexviz.explore.run_stateful import stateful_report
from dexviz.explore.schedule import clock, run_schedule
from dexviz.explore.schedule_records import DEFAULT_MAX_DEPTH, Policy, ScheduleResult, Setup
from dexviz.explore.search import Node, TreePolicy, advance, schedule_done
from dexviz.explore.symmetry import Symmetry
from dexviz.explore.violation import Violation, shrink
from dexviz.explore.visits import Visits
from dexviz.sdk.flow import Flow
from dexviz.sdk.registry import Registry

STRATEGIES = ("dfs", "dpor", "stateful", "liveness", "pct", "random")
DEFAULT_SAMPLES = 1_000
"""Schedules ``"pct"`` and ``"random"`` run when no max_schedules is given."""
SHRINK_SECONDS = 8.0


@dataclass
class _Tally:
    """Counts gathered while schedules run."""

    schedules: int = 0
    pruned: int = 0
    states_pruned: int = 0
    depth_bounded: int = 0
    states: set[str] = field(default_factory=set)
    terminal: set[str] = field(default_factory=set)
    found: list[ScheduleResult] = field(default_factory=list)
    graph: StateGraph | None = field(default_factory=StateGraph)
    longest: int = 0
    units: int = 0

    def add(self, result: ScheduleResult) -> None:
        self.schedules += 1
        self.longest = max(self.longest, len(result.steps))
        self.units = max(self.units, len({s.name for s in result.steps}))
        if result.outcome == "blocked":
            self.pruned += 1
        elif result.outcome == "pruned":
            self.states_pruned += 1
        elif result.outcome == "depth":
            self.depth_bounded += 1
        elif result.outcome == "terminal" and result.final is not None:
            self.terminal.add(result.final.digest)
        states = [s.state for s in result.steps]
        if result.initial is not None:
            self.states.add(result.initial.digest)
        self.states.update(s.digest for s in states)
        if self.graph is not None and result.initial is not None:
            path = ((s.state.digest, s.state.status, s.label) for s in result.steps)
            self.graph.add_path(result.initial.digest, path)
            if result.found is not None and result.final is not None:
                self.graph.violating.add(result.final.digest)
            if len(self.graph) > GRAPH_KEEP:
                self.graph = None
        if result.found is not None:
            self.found.append(result)


def _check_bounds(strategy: str, max_schedules: int | None, max_violations: int) -> None:
    """Refuse an unknown strategy or a bound below one, naming it."""
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}; got {strategy!r}")
    for name, value in (("max_schedules", max_schedules), ("max_violations", max_violations)):
        if value is not None and value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")


def _liveness_only(check: object) -> bool:
    """Whether ``check`` is one liveness check or a non-empty list of only such checks."""
    checks = check if isinstance(check, (list, tuple)) else (check,)
    return bool(checks) and all(isinstance(c, LivenessCheck) for c in checks)


def _setup(
    flow_or_flows: Flow[Any] | Sequence[Flow[Any]] | Registry,
    input: Any,
    check: Any,
    actions: Sequence[Action],
    faults: FaultBudget | None,
    max_depth: int | None,
    flow: Any,
    flow_id: str,
) -> Setup:
    registry = as_registry(flow_or_flows)
    if flow is None:
        if isinstance(flow_or_flows, Flow):
            flow = flow_or_flows
        else:
            flow = registry.definitions[0].flow
    checks = tuple(as_check(c) for c in (check if isinstance(check, (list, tuple)) else [check]))
    for action in actions:
        if not isinstance(action, Action):
            raise TypeError(f"actions take Action values (Action.publish(...)), got {action!r}")
    if faults is not None and not isinstance(faults, FaultBudget):
        raise TypeError(f"faults takes a FaultBudget (FaultBudget.of(Step)), got {faults!r}")
    if max_depth is not None and max_depth < 1:
        raise ValueError(f"max_depth must be >= 1, got {max_depth}")
    validate_names(checks, faults, registry)
    locks = any(
        step.options is not None
        and (step.options.execute_lock_attributes or step.options.wait_for_lock_attributes)
        for definition in registry.definitions
        for step in definition.steps.values()
    )
    return Setup(registry, flow, input, flow_id, checks, tuple(actions), faults,
                 max_depth or DEFAULT_MAX_DEPTH, locks)


def explore(
    flow_or_flows: Flow[Any] | Sequence[Flow[Any]] | Registry,
    input: Any = None,
    *,
    check: Check | Callable[..., object] | Sequence[Check | Callable[..., object]],
    actions: Sequence[Action] = (),
    faults: FaultBudget | None = None,
    strategy: str = "dpor",
    max_schedules: int | None = None,
    max_depth: int | None = None,
    time_budget: float | None = None,
    flow: Any = None,
    flow_id: str = "flow-1",
    seed: int = 0,
    pct_depth: int = 3,
    max_violations: int = 1,
    progress: bool = True,
    prune: bool = True,
    workers: int | None = None,
    cluster: Any = None,
    symmetric: Sequence[Sequence[Any]] | None = None,
) -> ExplorationReport:
    """Run ``flow`` with ``input`` under every schedule (or a sample) and check ``check``.

    Args:
        flow_or_flows: The Flow (or Flows, or a Registry; ``flow=`` picks the one to start).
        input: The start input.
        check: One check or a list: ``checks.exclusive(...)`` and the other built-ins, or any
            callable ``(history, flow_state)`` returning None/True or False/a message.
        actions: Client calls the explorer may interleave anywhere (``Action.publish``, ...).
        faults: A FaultBudget: failures the explorer may inject at any attempt it covers.
        strategy: ``"dpor"`` (default), ``"dfs"``, ``"stateful"``, ``"liveness"``, ``"pct"``
            or ``"random"``. ``"liveness"`` is ``explore_liveness``'s fair-cycle search over the
            state graph (``max_schedules`` bounds its states); it is also what ``"dpor"`` and
            ``"stateful"`` run when every check is a liveness check (``eventually_closes()``,
            ``eventually(p)``). ``"dfs"``, ``"pct"`` and ``"random"`` check a liveness check
            on finite schedules only, as ``terminates()`` does.
        max_schedules: Stop after this many schedules.
        max_depth: Cut every schedule after this many steps (counted in ``depth_bounded``;
            a search that cut any schedule is not a proof).
        time_budget: Stop starting schedules after this many seconds.
        seed: The random source of ``"pct"`` and ``"random"``.
        pct_depth: The bug depth PCT targets (its bound is stated in the report).
        max_violations: Stop once this many schedules violated a check.
        progress: Show a progress bar (ipywidgets in Jupyter, tqdm in a terminal).
        prune: ``"dfs"`` and ``"dpor"`` stop a schedule at a state already explored (its
            future was explored already; see ``explore.fingerprint`` for what a state is).
            False explores every schedule the strategy picks, for comparison or debugging.
        flow: The Flow to start when ``flow_or_flows`` holds several (default: the first).
        flow_id: The id the Flow is started with.
        workers: ``"stateful"``: worker processes that expand each breadth-first level
            (default: the machine's cores; the verdict, counts and counterexample are the
            same for any number).
        cluster: ``"stateful"``: a ``dask.distributed.Client`` or a scheduler address
            (``"tcp://host:8786"``) whose workers expand the levels instead.
        symmetric: ``"stateful"``: groups of input values the Flow treats alike (each a list,
            e.g. ``[edits[:7]]``): states that differ by a permutation of a group's values,
            wherever they appear, are one state (TLC's SYMMETRY). A violation is still
            replayed with the concrete values.

    Returns:
        An ExplorationReport; ``report.violations[0].replay()`` re-runs the counterexample.
    """
    _check_bounds(strategy, max_schedules, max_violations)
    if strategy == "liveness" or (strategy in ("dpor", "stateful") and _liveness_only(check)):
        if workers not in (None, 1) or cluster is not None or symmetric is not None:
            raise ValueError("the liveness search runs in one process without symmetry: "
                             "drop workers, cluster and symmetric")  # fmt: skip
        return explore_liveness(flow_or_flows, input, check=check, actions=actions,  # type: ignore[arg-type]
                                faults=faults, max_states=max_schedules or DEFAULT_MAX_STATES,
                                flow=flow, flow_id=flow_id)  # fmt: skip
    setup = _setup(flow_or_flows, input, check, actions, faults, max_depth, flow, flow_id)
    symmetry = Symmetry.of(symmetric)
    if symmetry is not None:
        setup = dataclasses.replace(setup, symmetry=symmetry)
    started = clock()
    deadline = None if time_budget is None else started + time_budget
    tally = _Tally()
    bar = Progress(max_schedules, progress)
    if strategy == "stateful":
        try:
            return stateful_report(
                setup, default_workers() if workers is None else workers, cluster, max_schedules,
                deadline, started, bar,
            )  # fmt: skip
        finally:
            bar.close()
    if workers not in (None, 1) or cluster is not None or symmetry is not None:
        bar.close()
        raise ValueError(
            f"workers, cluster and symmetric need strategy='stateful', not {strategy!r}"
        )
    try:
        if strategy in ("dfs", "dpor"):
            stopped, complete = _tree(setup, strategy == "dpor", tally, bar, max_schedules,
                                      deadline, max_violations, prune)
        else:
            stopped = _sample(setup, strategy, tally, bar, max_schedules or DEFAULT_SAMPLES,
                              deadline, max_violations, random.Random(seed), pct_depth)
            complete = False
    finally:
        bar.close()
    violations = _shrunk(setup, tally.found, started)
    bound = None
    if strategy == "pct":
        bound = PctBound(pct_depth, tally.units, tally.longest, tally.schedules)
    return ExplorationReport(
        strategy, tally.schedules, len(tally.states), tally.pruned,
        complete, clock() - started,
        violations, frozenset(tally.terminal), tuple(c.name for c in setup.checks), bound,
        stopped, tally.depth_bounded, tally.graph,
        tally.states_pruned if prune and strategy in ("dfs", "dpor") else None,
    )


def _stop_reason(
    tally: _Tally, max_schedules: int | None, deadline: float | None, max_violations: int
) -> str | None:
    if len(tally.found) >= max_violations:
        return "violation"
    if max_schedules is not None and tally.schedules >= max_schedules:
        return "max_schedules"
    if deadline is not None and clock() > deadline:
        return "time_budget"
    return None


def _tree(
    setup: Setup, reduce: bool, tally: _Tally, bar: Progress, max_schedules: int | None,
    deadline: float | None, max_violations: int, prune: bool,
) -> tuple[str | None, bool]:
    stack: list[Node] = []
    visits = Visits() if prune else None

    def pruned(count: int) -> None:
        tally.pruned += count

    while True:
        policy = TreePolicy(stack, reduce, visits)
        result = run_schedule(setup, policy)
        schedule_done(result, stack, reduce, policy)
        tally.add(result)
        bar.update(tally.schedules, len(tally.states), len(tally.found),
                   None if visits is None else tally.states_pruned)
        del stack[len(result.choices):]
        more = advance(stack, pruned if reduce else lambda _: None)
        if not more:
            return None, True
        if visits is not None:
            visits.close_below(len(stack))
        reason = _stop_reason(tally, max_schedules, deadline, max_violations)
        if reason is not None:
            return reason, False


def _sample(
    setup: Setup, strategy: str, tally: _Tally, bar: Progress, max_schedules: int,
    deadline: float | None, max_violations: int, rng: random.Random, depth: int,
) -> str | None:
    while True:
        policy: Policy
        if strategy == "pct":
            policy = PctPolicy(rng, depth, tally.longest or 50)
        else:
            policy = RandomPolicy(rng)
        tally.add(run_schedule(setup, policy))
        bar.update(tally.schedules, len(tally.states), len(tally.found))
        reason = _stop_reason(tally, max_schedules, deadline, max_violations)
        if reason is not None:
            return None if reason == "max_schedules" else reason


def _shrunk(setup: Setup, found: list[ScheduleResult], started: float) -> tuple[Violation, ...]:
    violations = []
    for result in found:
        deadline = clock() + SHRINK_SECONDS
        best, tests = shrink(setup, result, deadline=deadline)
        violations.append(Violation.of(setup, best, len(result.steps), tests))
    del started
    return tuple(violations)
