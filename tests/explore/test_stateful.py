"""The stateful search expands each distinct state once and agrees with stateless dfs.

Soundness: on every Flow of the dpor soundness tests and on generated Flows, ``"stateful"``
reaches the same terminal states and verdicts as ``"dfs"``; its counterexample is a shortest
one and replays; ``workers=2`` returns exactly what ``workers=1`` does.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings

from dexviz.engine.core.choice import FaultBudget
from dexviz.examples.contract_edit import (
    CONTRACT_EDIT_TOKEN,
    ContractEdit,
    ContractEditFlow,
    SaveContractEdit,
)
from dexviz.examples.contract_edit_broken import BrokenContractEditFlow
from dexviz.explore import checks, explore
from dexviz.explore.parallel import default_workers
from dexviz.explore.stateful import StateHandle, expand
from tests.explore.flows import Case
from tests.explore.test_soundness import SOUNDNESS_CASES, clients_and_faults, generated

BOUND = 2_000
"""Schedules dfs may run here; a generated draw needing more is discarded."""
STATE_BOUND = 20_000
"""Distinct states the stateful search may reach: its exact fingerprints keep execution ids,
so it can meet more states than dfs (which prunes by the same fingerprints) runs schedules."""
TOKEN_CHECKS = [checks.exclusive(CONTRACT_EDIT_TOKEN.name),
                checks.conserved(CONTRACT_EDIT_TOKEN.name), checks.terminates()]


def _explore(case: Case, strategy: str, check=(), **options):  # type: ignore[no-untyped-def]
    bound = STATE_BOUND if strategy == "stateful" else BOUND
    return explore(
        case.flow, case.input, check=list(check), actions=case.actions, faults=case.faults,
        strategy=strategy, progress=False, max_schedules=bound, **options,
    )


def _compare(case: Case, check=(), generated: bool = False) -> None:  # type: ignore[no-untyped-def]
    every = _explore(case, "dfs", check)
    # A violation stops both searches; a draw over the bound would compare partial ones.
    finished = every.exhaustive or not every.ok
    if generated:
        assume(finished)
    assert finished
    stored = _explore(case, "stateful", check)
    assert stored.ok == every.ok
    if every.ok:
        assert stored.exhaustive
        assert stored.terminal_states == every.terminal_states
        assert stored.distinct_states == every.distinct_states


@pytest.mark.parametrize("case", SOUNDNESS_CASES, ids=lambda c: c.name)
def test_stateful_reaches_the_terminal_states_of_dfs(case: Case) -> None:
    _compare(case)


@pytest.mark.parametrize("case", SOUNDNESS_CASES, ids=lambda c: c.name)
def test_stateful_gives_the_verdicts_of_dfs(case: Case) -> None:
    _compare(case, [checks.terminates()])


@settings(max_examples=25)
@given(generated)
def test_stateful_matches_dfs_on_generated_flows(case: Case) -> None:
    _compare(case, [checks.terminates()])


@settings(max_examples=5)
@given(clients_and_faults)
def test_stateful_matches_dfs_with_client_actions_and_a_fault_budget(case: Case) -> None:
    _compare(case, generated=True)


def test_each_distinct_state_is_expanded_once() -> None:
    case = Case("contract-2", ContractEditFlow(), [ContractEdit(r) for r in "ab"],
                faults=FaultBudget.of(SaveContractEdit))
    report = _explore(case, "stateful", TOKEN_CHECKS)
    counts = report.stateful
    assert report.proven and counts is not None
    # Every transition reached either a new state (expanded once) or a seen one (merged).
    assert counts.transitions == counts.expanded - 1 + counts.states_pruned
    assert counts.states_pruned > 0
    # workers defaults to the machine's cores.
    assert counts.workers == default_workers() and counts.depth > 0


def test_the_counterexample_is_a_shortest_one_and_replays() -> None:
    case = Case("broken-2", BrokenContractEditFlow(), [ContractEdit("a"), ContractEdit("b")])
    stored = _explore(case, "stateful", TOKEN_CHECKS)
    every = _explore(case, "dfs", TOKEN_CHECKS)
    assert not stored.ok and not every.ok
    violation = stored.violations[0]
    assert violation.check == every.violations[0].check
    # Breadth first: no schedule violates in fewer steps than the one found.
    assert len(violation.steps) <= len(every.violations[0].steps)
    run = violation.replay()
    assert run.violating_seq is not None


def test_a_terminal_state_has_no_successors_and_the_start_has_some() -> None:
    from dexviz.explore.api import _setup

    case = Case("contract-1", ContractEditFlow(), [ContractEdit("a")])
    setup = _setup(case.flow, case.input, [], (), None, None, None, "flow-1")
    start = expand(setup, StateHandle((), 0))
    assert start.successors and start.at is not None
    handle = start.successors[0].handle
    while (expansion := expand(setup, handle)).successors:
        handle = expansion.successors[0].handle
    assert expansion.outcome == "terminal" and not expansion.violated


def test_workers_2_gives_the_results_of_workers_1() -> None:
    case = Case("contract-3", ContractEditFlow(), [ContractEdit(r) for r in "abc"],
                faults=FaultBudget.of(SaveContractEdit))
    one = _explore(case, "stateful", TOKEN_CHECKS)
    two = _explore(case, "stateful", TOKEN_CHECKS, workers=2)
    assert two.stateful is not None and two.stateful.workers == 2
    assert (two.verdict(), two.terminal_states, two.distinct_states, two.schedules) == (
        one.verdict(), one.terminal_states, one.distinct_states, one.schedules)


def test_workers_2_finds_the_counterexample_of_workers_1() -> None:
    case = Case("broken-3", BrokenContractEditFlow(), [ContractEdit(r) for r in "abc"])
    one = _explore(case, "stateful", TOKEN_CHECKS)
    two = _explore(case, "stateful", TOKEN_CHECKS, workers=2)
    assert not one.ok
    assert two.violations[0].trace == one.violations[0].trace


@pytest.mark.parametrize(
    ("options", "message"),
    [({"workers": 0}, "workers must be"),
     ({"strategy": "dfs", "workers": 2}, "strategy='stateful'")],
)
def test_bad_worker_options_are_errors(options: dict[str, object], message: str) -> None:
    case = Case("contract-1", ContractEditFlow(), [ContractEdit("a")])
    merged = {"strategy": "stateful", **options}
    strategy = str(merged.pop("strategy"))
    with pytest.raises(ValueError, match=message):
        _explore(case, strategy, **merged)


def test_worker_processes_keep_their_snapshots_and_send_back_only_names() -> None:
    from dexviz.explore.affine_pool import AffinePool
    from dexviz.explore.api import _setup
    from dexviz.explore.schedule_records import Resume
    from dexviz.explore.stateful import SnapshotRef

    edits = [ContractEdit(r) for r in "abc"]
    setup = _setup(ContractEditFlow(), edits, [], (), None, None, None, "flow-1")
    pool = AffinePool(setup, 2)
    seen: set[str | None] = set()
    level, named = [StateHandle((), 0)], 0
    try:
        for _ in range(40):
            expansions = pool.expand_all(level)
            level = []
            for successor in (s for e in expansions for s in e.successors):
                if successor.fingerprint not in seen:
                    seen.add(successor.fingerprint)
                    level.append(successor.handle)
            if named:
                # Once the workers hold the states, no snapshot travels back: only names.
                assert not any(isinstance(h.base, Resume) for h in level)
            named += sum(isinstance(h.base, SnapshotRef) for h in level)
            if not level:
                break
    finally:
        pool.close()
    assert named > 0


def test_a_worker_does_not_snapshot_a_successor_the_search_has_seen() -> None:
    from dexviz.explore.affine_pool import HeldExpander
    from dexviz.explore.api import _setup
    from dexviz.explore.stateful import SnapshotRef

    setup = _setup(ContractEditFlow(), [ContractEdit(r) for r in "ab"], [], (), None, None,
                   None, "flow-1")  # fmt: skip
    start = StateHandle((), 0)
    [first] = HeldExpander(0, setup).expand([start])
    assert all(isinstance(s.handle.base, SnapshotRef) for s in first.successors)
    # Its own successors, or those another worker found and the search forwarded: known,
    # so reached again they keep their parent's base (and are replayed, if ever needed).
    side = HeldExpander(1, setup)
    side.forget(set(), [s.fingerprint for s in first.successors if s.fingerprint])
    [again] = side.expand([start])
    assert [s.fingerprint for s in again.successors] == [s.fingerprint for s in first.successors]
    assert all(s.handle.base is None for s in again.successors)


def test_an_unbalanced_level_moves_its_tail_to_the_idle_worker() -> None:
    from dexviz.explore.affine_pool import moves

    # Affinity put all ten states on worker 0: the last five move, in order.
    assert moves([list(range(10)), []]) == [(0, 1, [5, 6, 7, 8, 9])]
    # Within the slack, nothing moves (a move ships a snapshot).
    assert moves([[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10]]) == []
    assert moves([[0, 1, 2, 3, 4, 5, 6, 7], [8], [9]]) == [(0, 1, [4, 5, 6]), (0, 2, [7])]


def test_workers_2_on_a_level_held_by_one_worker_gives_the_results_of_workers_1(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dexviz.explore import affine_pool

    case = Case("contract-3", ContractEditFlow(), [ContractEdit(r) for r in "abc"],
                faults=FaultBudget.of(SaveContractEdit, count=1))  # fmt: skip
    one = _explore(case, "stateful", TOKEN_CHECKS, workers=1)
    moved: list[int] = []
    original = affine_pool.moves

    def counting(parts):  # type: ignore[no-untyped-def]
        planned = original(parts)
        moved.extend(len(indices) for _, _, indices in planned)
        return planned

    monkeypatch.setattr(affine_pool, "moves", counting)

    def all_on_worker_0(handles, workers):  # type: ignore[no-untyped-def]
        # Every state the workers do not hold yet goes to worker 0: all descendants follow.
        parts = [[] for _ in range(workers)]
        for index, handle in enumerate(handles):
            held = isinstance(handle.base, affine_pool.SnapshotRef)
            parts[handle.base.worker if held else 0].append(index)
        return parts

    monkeypatch.setattr(affine_pool, "partition", all_on_worker_0)
    two = _explore(case, "stateful", TOKEN_CHECKS, workers=2)
    assert sum(moved) > 0  # states (with their snapshots) did move between the workers
    assert (two.verdict(), two.distinct_states, two.schedules, two.terminal_states) == (
        one.verdict(), one.distinct_states, one.schedules, one.terminal_states)
