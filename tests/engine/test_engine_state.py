"""Engine.snapshot() / restore(): a run continues from any commit with the same history.

Every Flow of the fast-path test and the seed's ContractEditFlow run once uninterrupted; the
same run is then snapshotted after every unit, and each snapshot is restored in the engine it
came from and, after a pickle round trip, in a new engine of freshly built Flows. Both must
finish with the uninterrupted run's history, byte for byte, and its result (R1: determinism).
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from dexviz import Engine, Flow
from dexviz.engine import EngineSnapshot, FaultPlan, SnapshotError, SQLiteStore
from dexviz.examples.contract_edit import ContractEdit, ContractEditFlow
from tests.engine.flows_a import AdHocFlow
from tests.engine.test_fast_path import Hop, _flows

MAX_CHECKED = 40
"""The most snapshots of one run that are each restored twice and run to the end."""


def _start(
    flow: Flow[Any], input: Any, seed: int, faults: FaultPlan | None = None
) -> Engine | None:
    engine = Engine([flow], seed=seed, faults=faults)
    try:
        engine.client().start_flow(flow, "flow-1", input)
    except Exception:  # noqa: BLE001 - an undecodable start input is one of the cases
        return None
    return engine


def _outcome(engine: Engine) -> tuple[str, str]:
    return engine.history("flow-1").to_jsonl(), repr(engine.result("flow-1"))


def _snapshots(engine: Engine) -> tuple[list[EngineSnapshot], int]:
    """A snapshot after the start and after every unit up to idle, and how many were refused.

    A coroutine handler suspended in a sleep is snapshotted too (its trace is re-driven on
    restore); one the re-drive could not rebuild is refused, counted, and checked to say so.
    """
    taken = [engine.snapshot()]
    refused = 0
    while not engine.is_idle:
        engine.step()
        try:
            taken.append(engine.snapshot())
        except SnapshotError as error:
            assert "coroutine handler cannot be snapshotted" in str(error)
            refused += 1
    return taken, refused


def _check_every_snapshot(
    name: str, build: Any, seed: int, faults: Any = lambda: None
) -> tuple[int, int]:
    """Snapshot after every unit; restore (some of) them twice each and compare the ends.

    ``faults`` makes each engine's fault plan (a new one per engine: plans keep counters).
    """
    flow, input = build()
    engine = _start(flow, input, seed, faults())
    if engine is None:
        pytest.skip(f"{name}: the start input is rejected before anything runs")
    snapshots, refused = _snapshots(engine)
    expected = _outcome(engine)
    # Every commit for the short runs; for a long one (the retries Flow: 155 units) 40 of
    # them, evenly spread and always the first and the last, to keep the test bounded.
    step = max(1, -(-len(snapshots) // MAX_CHECKED))
    picked = sorted({*range(0, len(snapshots), step), len(snapshots) - 1})
    for index in picked:
        snapshot = snapshots[index]
        engine.restore(snapshot)
        engine.run()
        assert _outcome(engine) == expected, f"{name} seed {seed}: same engine, unit {index}"
        fresh_flow, _ = build()
        # The seed comes from the snapshot.
        fresh = Engine([fresh_flow], seed=seed + 1000, faults=faults())
        fresh.restore(pickle.loads(pickle.dumps(snapshot)))
        fresh.run()
        assert _outcome(fresh) == expected, f"{name} seed {seed}: new engine, unit {index}"
    return len(snapshots), refused


@pytest.mark.parametrize("name", sorted(_flows()))
@pytest.mark.parametrize("seed", [0, 7])
def test_every_fast_path_flow_continues_identically_from_every_commit(
    name: str, seed: int
) -> None:
    taken, refused = _check_every_snapshot(name, lambda: _flows()[name], seed)
    assert taken >= 2
    # Every state can be snapshotted, the seed's with its edits suspended in a sleep too.
    assert refused == 0


@pytest.mark.parametrize("reviewers", [2, 4])
def test_the_seed_flow_continues_identically_from_every_commit(reviewers: int) -> None:
    def build() -> tuple[Flow[Any], Any]:
        return ContractEditFlow(), [ContractEdit(f"r{i}") for i in range(reviewers)]

    taken, refused = _check_every_snapshot("ContractEditFlow", build, 3)
    assert taken > 2 * reviewers and refused == 0


def test_a_snapshot_is_independent_of_the_run_that_goes_on() -> None:
    engine = _start(ContractEditFlow(), [ContractEdit("a"), ContractEdit("b")], 1)
    assert engine is not None
    engine.step()
    early = engine.snapshot()
    events = len(engine.history("flow-1"))
    engine.run()
    assert len(engine.history("flow-1")) > events
    finished = engine.history("flow-1").to_jsonl()
    engine.restore(early)
    assert len(engine.history("flow-1")) == events
    engine.run()
    engine.restore(early)  # the snapshot is unchanged by the runs restored from it
    engine.run()
    assert engine.history("flow-1").to_jsonl() == finished


def test_restore_rejects_a_snapshot_of_other_flows() -> None:
    engine = _start(AdHocFlow("SnapChain", Hop()), 0, 0)
    assert engine is not None
    other = Engine([ContractEditFlow()])
    with pytest.raises(SnapshotError, match="SnapChain"):
        other.restore(engine.snapshot())


def test_snapshot_refuses_a_durable_store(tmp_path: Any) -> None:
    flow = AdHocFlow("SnapDurable", Hop())
    with Engine([flow], store=SQLiteStore(tmp_path / "db.sqlite")) as engine:
        with pytest.raises(SnapshotError, match="SQLiteStore"):
            engine.snapshot()


def test_the_fault_plan_counters_come_back_with_the_snapshot() -> None:
    plan = FaultPlan.of(FaultPlan.crash_after_commit(1000))
    flow = AdHocFlow("SnapFaults", Hop())
    engine = Engine([flow], faults=plan)
    engine.client().start_flow(flow, "flow-1", 0)
    before = engine.snapshot()
    commits = plan.commits
    engine.run()
    assert plan.commits > commits
    engine.restore(before)
    assert plan.commits == commits


def test_a_copied_execution_keeps_every_slot_and_shares_nothing_mutable() -> None:
    from dexviz.engine.core.state import Execution
    from dexviz.engine.state_copy import StateCopier, settled

    engine = _start(ContractEditFlow(), [ContractEdit("a"), ContractEdit("b")], 2)
    assert engine is not None
    for _ in range(6):
        engine.step()
    executions = list(engine._rt.runs["flow-1"].executions.values())
    assert any(settled(ex) for ex in executions) and not all(settled(ex) for ex in executions)
    for ex in executions:
        copy = StateCopier().copy(ex)
        if settled(ex):  # ended for good: the engine never writes to it again
            assert copy is ex
            continue
        assert copy is not ex
        for name in Execution.__slots__:
            if name == "__dict__":
                assert copy.__dict__.keys() == ex.__dict__.keys()
                continue
            mine, theirs = getattr(copy, name), getattr(ex, name)
            assert mine == theirs or name == "pending_unit", name
            # The input (a private codec copy) and the Attribute snapshot are read-only: shared.
            if isinstance(theirs, (dict, list)) and name not in ("method_snapshot", "input"):
                assert mine is not theirs, name


def test_restoring_over_a_coroutine_in_flight_drops_it_and_snapshots_again() -> None:
    # The explorer restores one engine over and over: a handler suspended in the state being
    # replaced belongs to that state, and must not keep the restored engine from snapshotting.
    engine = _start(ContractEditFlow(), [ContractEdit("a"), ContractEdit("b")], seed=1)
    assert engine is not None
    start = engine.snapshot()
    loop = None
    while loop is None and not engine.is_idle:
        engine.step()
        if engine._rt._loop is not None and engine._rt._loop.pending_tasks():
            loop = engine._rt._loop
    assert loop is not None, "the seed's EditContract awaits a sleep"
    engine.restore(start)
    assert not loop.pending_tasks()  # the replaced state's coroutines went with it
    again = engine.snapshot()
    engine.run_until_idle()
    fresh = _start(ContractEditFlow(), [ContractEdit("a"), ContractEdit("b")], seed=1)
    assert fresh is not None
    fresh.restore(again)
    fresh.run_until_idle()
    assert _outcome(engine) == _outcome(fresh)


def test_a_copied_run_sets_every_slot_and_copies_its_containers() -> None:
    from dexviz.engine.core.state import FlowRun
    from dexviz.engine.state_copy import StateCopier

    engine = _start(ContractEditFlow(), [ContractEdit(f"r{i}") for i in range(4)], 2)
    assert engine is not None
    for _ in range(8):
        engine.step()
    run = engine._rt.runs["flow-1"]
    copy = StateCopier().copy(run)
    shared = ("definition", "start_options", "start_input", "message_ids", "status")
    for name in FlowRun.__slots__:
        mine, theirs = getattr(copy, name), getattr(run, name)  # an unset slot raises
        if name in shared or theirs is None or isinstance(theirs, (str, int)):
            assert mine is theirs or mine == theirs, name
        else:
            assert mine is not theirs, name
    assert copy.executions.keys() == run.executions.keys()
    assert copy._queues.keys() == run._queues.keys()


def _pickled_now_and_after_the_run(engine: Engine) -> list[tuple[bytes, bytes]]:
    """Each snapshot of the run pickled when taken, and a twin of it pickled at the end."""
    kept: list[tuple[bytes, EngineSnapshot]] = []
    while not engine.is_idle:
        engine.step()
        try:
            now, later = engine.snapshot(), engine.snapshot()
        except SnapshotError:
            continue
        kept.append((pickle.dumps(now), later))
    return [(then, pickle.dumps(later)) for then, later in kept]


def test_a_snapshot_is_unchanged_by_the_run_it_shares_settled_parts_with() -> None:
    # Settled executions and history logs are shared, not copied: a snapshot pickled when
    # taken and its twin pickled after the run went on to the end must be the same bytes.
    engine = _start(ContractEditFlow(), [ContractEdit(f"r{i}") for i in range(4)], 5)
    assert engine is not None
    pairs = _pickled_now_and_after_the_run(engine)
    assert len(pairs) > 8
    for index, (then, after) in enumerate(pairs):
        assert after == then, f"snapshot {index} changed after it was taken"


@pytest.mark.parametrize("name", sorted(_flows()))
def test_no_fast_path_flow_changes_a_snapshot_after_it_is_taken(name: str) -> None:
    flow, input = _flows()[name]
    engine = _start(flow, input, 0)
    if engine is None:
        pytest.skip(f"{name}: the start input is rejected before anything runs")
    for index, (then, after) in enumerate(_pickled_now_and_after_the_run(engine)):
        assert after == then, f"{name}: snapshot {index} changed after it was taken"


def test_restoring_the_same_snapshot_twice_and_after_a_pickle_continues_alike() -> None:
    def build() -> tuple[Flow[Any], Any]:
        return ContractEditFlow(), [ContractEdit(f"r{i}") for i in range(8)]

    flow, edits = build()
    engine = _start(flow, edits, 3)
    assert engine is not None
    taken, _ = _snapshots(engine)
    expected = _outcome(engine)
    middle = taken[len(taken) // 2]
    # Right after it is taken (the history log is then shared as it is), and twice more.
    engine.restore(middle)
    engine.restore(engine.snapshot())
    engine.run()
    assert _outcome(engine) == expected
    for snapshot in (middle, taken[-1], middle, taken[1]):
        engine.restore(snapshot)
        engine.run()
        assert _outcome(engine) == expected
    data = pickle.dumps(middle)
    for _ in range(2):
        fresh_flow, _ = build()
        fresh = Engine([fresh_flow])
        fresh.restore(pickle.loads(data))
        fresh.run()
        assert _outcome(fresh) == expected


def test_a_restored_history_is_the_snapshot_prefix_of_a_longer_log() -> None:
    engine = _start(ContractEditFlow(), [ContractEdit("a"), ContractEdit("b")], 1)
    assert engine is not None
    engine.step()
    early = engine.snapshot()
    events = engine.history("flow-1").events
    engine.run()
    engine.restore(early)
    assert engine.history("flow-1").events == events
    assert len(early.data) > 0 and pickle.loads(pickle.dumps(early)) == early
