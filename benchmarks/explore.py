"""Exploration: proving ContractEditFlow, finding the broken variant's bug, schedules per second.

Goals (issue "Explore every interleaving"):

- ContractEditFlow with 3 reviewers (one withdraws) and one failed SaveContractEdit attempt in
  the fault budget is explored exhaustively by ``"dpor"`` and proven in <= 60 s (with state
  pruning, the default; without it, for comparison, which must reach the same terminal states
  and verdict; ``"dfs"`` with pruning must finish with them too); beside it, how
  many schedules ``"dfs"`` would need: counted exactly for 2 reviewers, and for 3 estimated
  with Knuth's estimator (the mean, over random walks down the choice tree, of the product of
  the option counts met), and counted by running ``"dfs"`` without pruning to the end (at most
  ``--dfs-seconds``);
- the broken variant's counterexample (3 reviewers) is found and shrunk in <= 10 s;
- schedules per second on a Flow whose schedules are 30 transitions long (three branches of
  ten Steps each), for ``"random"`` walks and for ``"dfs"`` without and with state pruning
  (pruned schedules are shorter; each step then costs a fingerprint of the whole state).

Prints a table (median of ``--runs``, wall and CPU seconds) and exits 1 when a goal is missed.

    .venv/bin/python benchmarks/explore.py [--runs 3] [--walks 300] [--dfs-seconds 300]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from dexviz import (
    Context,
    Flow,
    Step,
    StepDecision,
    StepList,
    StepMovement,
    go_to,
    go_to_many,
    graceful_complete,
)
from dexviz.examples.contract_edit import ContractEdit, ContractEditFlow, SaveContractEdit
from dexviz.examples.contract_edit_broken import BrokenContractEditFlow
from dexviz.explore import FaultBudget, checks, explore
from dexviz.explore.api import _setup
from dexviz.explore.randomized import RandomPolicy
from dexviz.explore.schedule import run_schedule

TOKEN = "contractEditToken"
CHECKS = [checks.exclusive(TOKEN), checks.conserved(TOKEN), checks.terminates()]
BUDGET = FaultBudget.of(SaveContractEdit, count=1)
LINK_COUNT = 10


def reviewers(count: int) -> list[ContractEdit]:
    """``count`` reviewers, the last of whom withdraws."""
    return [ContractEdit(f"r{i}", should_withdraw=i == count) for i in range(1, count + 1)]


class Fork(Step[int]):
    """Start three chains."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(*[StepMovement.of(Link, (b, 1)) for b in range(3)])


class Link(Step[tuple[int, int]]):
    """One Step of a chain of ten."""

    def execute(self, context: Context, at: tuple[int, int]) -> StepDecision:
        branch, index = at
        return go_to(Link, (branch, index + 1)) if index < LINK_COUNT else graceful_complete(branch)


class ThreeChains(Flow[int]):
    """31 transitions per schedule: the fork and three chains of ten Steps."""

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Fork()).other_steps(Link())


def timed(action: Callable[[], Any], runs: int) -> tuple[Any, float, float]:
    """The last result, and the median wall and CPU seconds over ``runs``."""
    walls, cpus, result = [], [], None
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        result = action()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return result, statistics.median(walls), statistics.median(cpus)


def knuth_estimate(flow: Flow[Any], input: Any, walks: int) -> float:
    """Estimated number of dfs schedules: mean product of option counts on random walks."""
    setup = _setup(flow, input, CHECKS, (), BUDGET, None, None, "flow-1")
    rng = random.Random(0)
    total = 0.0
    for _ in range(walks):
        result = run_schedule(setup, RandomPolicy(rng))
        total += math.prod(c.count for c in result.choices)
    return total / walks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--walks", type=int, default=300)
    parser.add_argument("--dfs-seconds", type=float, default=300.0)
    args = parser.parse_args()
    ok = True
    rows: list[tuple[str, str, str]] = []

    proof, wall, cpu = timed(lambda: explore(ContractEditFlow(), reviewers(3), check=CHECKS,
                                             faults=BUDGET, progress=False), args.runs)
    met = proof.proven and wall <= 60
    ok &= met
    rows.append(("3 reviewers + 1 save failure, dpor",
                 f"{proof.schedules} schedules, {len(proof.terminal_states)} terminal states, "
                 f"proven={proof.proven}, {wall:.2f} s wall / {cpu:.2f} s CPU",
                 f"<= 60 s: {'met' if met else 'MISSED'}"))

    unpruned = explore(ContractEditFlow(), reviewers(3), check=CHECKS, faults=BUDGET,
                       prune=False, progress=False)
    same = unpruned.terminal_states == proof.terminal_states and unpruned.ok == proof.ok
    ok &= same
    rows.append(("3 reviewers + 1 save failure, dpor, prune=False",
                 f"{unpruned.counts()}, {unpruned.wall_time_s:.2f} s; pruned: {proof.counts()}",
                 f"same terminal states and verdict: {same}"))
    for strategy in ("dfs", "dpor"):
        for prune in (False, True):
            small = explore(ContractEditFlow(), reviewers(2), check=CHECKS, faults=BUDGET,
                            strategy=strategy, prune=prune, progress=False)
            rows.append((f"2 reviewers + 1 save failure, {strategy}, prune={prune}",
                         f"{small.counts()} (exhaustive={small.exhaustive}), "
                         f"{small.wall_time_s:.2f} s", "count"))
    pruned_dfs = explore(ContractEditFlow(), reviewers(3), check=CHECKS, faults=BUDGET,
                         strategy="dfs", progress=False)
    same = pruned_dfs.terminal_states == proof.terminal_states and pruned_dfs.exhaustive
    ok &= same
    rows.append(("3 reviewers + 1 save failure, dfs, prune=True",
                 f"{pruned_dfs.counts()}, {pruned_dfs.wall_time_s:.2f} s",
                 f"exhaustive, the same terminal states as dpor: {same}"))
    estimate = knuth_estimate(ContractEditFlow(), reviewers(3), args.walks)
    rows.append(("3 reviewers + 1 save failure, dfs (estimate)",
                 f"~{estimate:.3g} schedules (Knuth, {args.walks} walks)", "estimate"))
    partial = explore(ContractEditFlow(), reviewers(3), check=CHECKS, faults=BUDGET,
                      strategy="dfs", time_budget=args.dfs_seconds, prune=False, progress=False)
    rate = partial.schedules / partial.wall_time_s
    left = "" if partial.exhaustive else f": ~{estimate / rate:.0f} s to finish at this rate"
    if partial.exhaustive:
        same = partial.terminal_states == proof.terminal_states
        ok &= same
        left = f", the same as dpor's: {same}"
    rows.append(("3 reviewers + 1 save failure, dfs, prune=False (run)",
                 f"{partial.schedules} schedules in {partial.wall_time_s:.1f} s, exhaustive="
                 f"{partial.exhaustive}, {len(partial.terminal_states)} terminal states{left}",
                 "count"))

    bug, wall, cpu = timed(lambda: explore(BrokenContractEditFlow(), reviewers(3), check=CHECKS,
                                           progress=False), args.runs)
    violation = bug.violations[0]
    met = wall <= 10
    ok &= met
    rows.append(("broken variant, 3 reviewers: found + shrunk",
                 f"{violation.check} after {violation.found_after} steps, shrunk to "
                 f"{len(violation.steps)} steps / {len(violation.trace)} choices "
                 f"({violation.shrink_tests} replays), {wall:.2f} s wall / {cpu:.2f} s CPU",
                 f"<= 10 s: {'met' if met else 'MISSED'}"))

    for strategy, prune in (("random", False), ("dfs", False), ("dfs", True)):
        sampled, wall, cpu = timed(lambda s=strategy, p=prune: explore(
            ThreeChains(), 0, check=[checks.terminates()], strategy=s, max_schedules=300,
            prune=p, progress=False), args.runs)
        rows.append((f"31-transition Flow, {strategy}" + (", prune=True" if prune else ""),
                     f"{sampled.schedules / wall:.0f} schedules/s "
                     f"({sampled.schedules / cpu:.0f} per CPU s)", "measured"))

    width = max(len(r[0]) for r in rows)
    for name, value, goal in rows:
        print(f"{name:<{width}}  {value}  [{goal}]")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
