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
- the stateful search (issue "Exploration at scale"): ContractEditFlow with 6 reviewers (one
  withdraws) and one SaveContractEdit fault, no symmetry, proven in <= 30 s; 8 reviewers with
  the 7 savers declared symmetric in <= 10 s; 12 with the 11 savers symmetric in <= 60 s; 7
  without symmetry reported (states, time, peak memory); >= 5,000 transitions per CPU second
  on the seed Flow (beside it, for context, the rate on ``_flows.SyncContractEditFlow``, the
  same Flow with synchronous handlers, whose every state can be snapshotted: the explorer's
  own cost per transition, without replays); workers=2 >= 1.7x workers=1 and a Dask
  LocalCluster of two >= 0.9x workers=2, with identical results (wall time: the speed-ups are
  about elapsed time, so the runs alternate, the median of ``--speedup-runs`` rounds is taken
  and the machine's load average is printed beside them);
- schedules per second on a Flow whose schedules are 30 transitions long (three branches of
  ten Steps each), for ``"random"`` walks and for ``"dfs"`` without and with state pruning
  (pruned schedules are shorter; each step then costs a fingerprint of the whole state).

Prints a table (median of ``--runs``, wall and CPU seconds) and exits 1 when a goal is missed.

    .venv/bin/python benchmarks/explore.py [--runs 3] [--walks 300] [--dfs-seconds 300]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from _flows import SyncContractEditFlow, SyncSaveContractEdit

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
SYNC_BUDGET = FaultBudget.of(SyncSaveContractEdit, count=1)
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


def stateful(
    count: int, symmetric: bool, workers: int = 1, cluster: Any = None, flow: Any = None
) -> Any:
    """ContractEditFlow (or ``flow``), ``count`` reviewers (one withdraws) + 1 save fault."""
    edits = reviewers(count)
    flow = flow or ContractEditFlow()
    budget = BUDGET if isinstance(flow, ContractEditFlow) else SYNC_BUDGET
    return explore(
        flow, edits, check=CHECKS, faults=budget, strategy="stateful",
        progress=False, workers=workers, cluster=cluster,
        symmetric=[edits[:-1]] if symmetric else None, max_schedules=STATE_BOUND,
    )  # fmt: skip


STATE_BOUND = 5_000_000
"""States a stateful benchmark run may expand: far above any row's, so every row is a proof."""


def _stateful_row(
    label: str, report: Any, wall: float, cpu: float, goal: float | None
) -> tuple[bool, tuple[str, str, str]]:
    counts = report.stateful
    met = report.proven and (goal is None or wall <= goal)
    text = (f"{counts.expanded:,} states, {counts.transitions:,} transitions, depth "
            f"{counts.depth}, pruned by {dict(counts.pruned_by)}, proven={report.proven}, "
            f"{wall:.1f} s wall / {cpu:.1f} s CPU, {counts.transitions / cpu:,.0f} transitions "
            f"per CPU s, peak {counts.peak_rss_mb:.0f} MiB, workers={counts.workers}")  # fmt: skip
    verdict = "reported" if goal is None else f"<= {goal:g} s wall: {'met' if met else 'MISSED'}"
    return met, (label, text, verdict)


def stateful_goals(args: argparse.Namespace) -> tuple[bool, list[tuple[str, str, str]]]:
    """The goal rows of issue #22 (exploration at scale)."""
    ok, rows = True, []
    for count, symmetric, goal in ((6, False, 30.0), (8, True, 10.0), (12, True, 60.0),
                                   (7, False, None)):  # fmt: skip
        if count > args.max_reviewers:
            continue
        report, wall, cpu = timed(lambda c=count, s=symmetric: stateful(c, s, args.workers), 1)
        label = f"stateful, {count} reviewers + 1 fault" + (
            f", {count - 1} savers symmetric" if symmetric else ", no symmetry")
        met, row = _stateful_row(label, report, wall, cpu, goal)
        ok &= met or goal is None
        rows.append(row)
    seed, wall, cpu = timed(lambda: stateful(4, False, 1), 1)
    rate = seed.stateful.transitions / cpu
    ok &= rate >= 5_000
    rows.append(("stateful, seed Flow (4 reviewers), transitions per CPU second",
                 f"{rate:,.0f} ({seed.stateful.transitions:,} in {cpu:.2f} s CPU)",
                 f">= 5,000: {'met' if rate >= 5_000 else 'MISSED'}"))  # fmt: skip
    synced, wall, cpu = timed(lambda: stateful(4, False, 1, flow=SyncContractEditFlow()), 1)
    rows.append(("stateful, synchronous seed Flow (4 reviewers, every state snapshotable), "
                 "transitions per CPU second: the explorer's own cost",
                 f"{synced.stateful.transitions / cpu:,.0f} ({synced.stateful.transitions:,} in "
                 f"{cpu:.2f} s CPU)", "context"))  # fmt: skip
    ok &= _speedups(args, rows)
    return ok, rows


def _speedups(args: argparse.Namespace, rows: list[tuple[str, str, str]]) -> bool:
    """workers=2 / workers=1 and Dask LocalCluster / workers=2, on one Flow, in wall time.

    The runs alternate (1, 2, Dask, 1, 2, Dask, ...) and each ratio is the median over
    ``--speedup-runs`` rounds, so that load from other processes hits every variant alike.
    The LocalCluster runs only for the Dask runs of each round (started before the timing):
    an idle cluster's scheduler, nannies and workers would take CPU from the other runs.
    """
    count, runs = args.speedup_reviewers, args.speedup_runs
    walls: dict[str, list[float]] = {"1": [], "2": [], "dask": []}
    results: dict[str, Any] = {}
    loads: list[float] = []
    dask = _has_distributed()
    for _ in range(runs):
        for name in ("1", "2", "dask"):
            if name == "dask" and not dask:
                continue
            with _local_cluster() if name == "dask" else nullcontext() as client:
                options = {"cluster": client} if name == "dask" else {"workers": int(name)}
                results[name], wall, _ = timed(lambda o=options: stateful(count, False, **o), 1)
            walls[name].append(wall)
            loads.append(_load_value())
    one = results["1"]
    same = _same(one, results["2"])
    speed = statistics.median(walls["1"]) / statistics.median(walls["2"])
    load = f"load average {statistics.mean(loads):.2f} on {os.cpu_count()} cores"
    rows.append((f"stateful, {count} reviewers, workers=2 / workers=1 (wall)",
                 f"{speed:.2f}x (median {statistics.median(walls['1']):.1f} s / "
                 f"{statistics.median(walls['2']):.1f} s over {runs} alternating runs), "
                 f"identical={same}, {load}", f">= 1.7: {'met' if speed >= 1.7 else 'MISSED'}"))
    ok = same and speed >= 1.7
    if not dask:
        rows.append(("stateful, Dask LocalCluster / workers=2", "distributed not installed", "-"))
        return ok
    same = _same(one, results["dask"])
    ratio = statistics.median(walls["2"]) / statistics.median(walls["dask"])
    rows.append((f"stateful, {count} reviewers, Dask LocalCluster(2) / workers=2 (wall)",
                 f"{ratio:.2f}x (median {statistics.median(walls['2']):.1f} s / "
                 f"{statistics.median(walls['dask']):.1f} s), identical={same}, {load}",
                 f">= 0.9: {'met' if ratio >= 0.9 else 'MISSED'}"))  # fmt: skip
    return ok and same and ratio >= 0.9


def _same(one: Any, other: Any) -> bool:
    """The same verdict, distinct states, transitions and terminal states."""
    def key(report: Any) -> tuple[Any, ...]:
        return (report.verdict(), report.distinct_states, report.stateful.transitions,
                report.terminal_states)  # fmt: skip
    return key(one) == key(other)


def _has_distributed() -> bool:
    """Whether dask distributed is installed (the Dask row needs it)."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


@contextmanager
def _local_cluster() -> Iterator[Any]:
    """A client of a Dask LocalCluster of two worker processes on 127.0.0.1, closed after.

    Set up for computing, as a cluster for this work would be: without the workers'
    statistical profiler (a sample of every thread's stack every 10 ms, on the worker's
    event loop, for the dashboard this benchmark does not open).
    """
    import dask
    from distributed import Client, LocalCluster

    with dask.config.set({"distributed.worker.profile.enabled": False}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                               dashboard_address=None, processes=True)  # type: ignore[no-untyped-call]  # fmt: skip
    client = Client(cluster)  # type: ignore[no-untyped-call]
    try:
        yield client
    finally:
        client.close()  # type: ignore[no-untyped-call]
        cluster.close()


def _load_value() -> float:
    """The one-minute load average (0 where the platform has none)."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--walks", type=int, default=300)
    parser.add_argument("--dfs-seconds", type=float, default=300.0)
    parser.add_argument("--max-reviewers", type=int, default=12,
                        help="stateful rows: skip those with more reviewers")
    parser.add_argument("--workers", type=int, default=1,
                        help="stateful goal rows: worker processes (the goals are for 1)")
    parser.add_argument("--speedup-reviewers", type=int, default=5,
                        help="the Flow size of the workers=2 and Dask speed rows")
    parser.add_argument("--speedup-runs", type=int, default=3,
                        help="alternating rounds of the workers=2 and Dask speed rows")
    parser.add_argument("--only-stateful", action="store_true",
                        help="run only the stateful (issue #22) rows")
    args = parser.parse_args()
    ok = True
    rows: list[tuple[str, str, str]] = []
    met, found = stateful_goals(args)
    ok &= met
    rows.extend(found)
    if args.only_stateful:
        return _print(rows, ok)

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

    return _print(rows, ok)


def _print(rows: list[tuple[str, str, str]], ok: bool) -> int:
    width = max(len(r[0]) for r in rows)
    for name, value, goal in rows:
        print(f"{name:<{width}}  {value}  [{goal}]", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
