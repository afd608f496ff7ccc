"""replay_check follows the recorded order of work, not the seed: shared engines replay too."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

import dexviz
from dexviz.analysis.run_diff import Aspect
from dexviz.compare import ReplayError, replay_check, replay_check_store
from dexviz.compare.recorded_order import RecordedOrder
from dexviz.engine import Engine, SQLiteStore
from dexviz.engine.attempt.invoke import QueuedStart
from dexviz.history import EventKind
from tests.compare.variants import CHANGES, EXPECTED_VERDICTS, load_variant


def _shared_engine_runs(module, seed=5):
    """Two runs of the module's ContractEditFlow recorded from one engine."""
    flow = module.ContractEditFlow()
    with Engine(flow, seed=seed) as engine:
        client = engine.client()
        client.start_flow(flow, "edit-a", module.sample_edits(8))
        client.start_flow(flow, "edit-b", module.sample_edits(6))
        engine.run_until_idle()
        return [engine.history("edit-a"), engine.history("edit-b")]


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shared")
    original = load_variant(folder, ())
    return folder, original, _shared_engine_runs(original)


def _schedule(history):
    return [(str(e.kind), e.execution_id) for e in history]


def test_runs_of_a_shared_engine_are_not_what_their_seed_alone_replays(shared):
    _, original, histories = shared
    alone = [
        dexviz.simulate(
            original.ContractEditFlow(), original.sample_edits(n), seed=5, flow_id=h.flow_id
        ).history
        for h, n in zip(histories, (8, 6), strict=True)
    ]
    assert any(_schedule(a) != _schedule(h) for a, h in zip(alone, histories, strict=True))


def test_a_directory_of_runs_from_one_shared_engine_replays_compatible(shared, tmp_path):
    _, original, histories = shared
    for history in histories:
        history.save(tmp_path / f"{history.flow_id}.jsonl")
    checked = replay_check_store(tmp_path, original.ContractEditFlow())
    assert [v.describe() for v in checked.verdicts] == [
        "edit-a.jsonl: edit-a: compatible",
        "edit-b.jsonl: edit-b: compatible",
    ]
    for verdict, history in zip(checked.verdicts, histories, strict=True):
        assert verdict.check is not None
        comparison = verdict.check.comparison  # folded only now: the replay gave back the run
        assert not comparison and len(comparison.pairs) == len(
            {e.execution_id for e in history if e.execution_id}
        )


def test_a_sqlite_store_written_by_one_engine_of_two_flows_replays_compatible(shared, tmp_path):
    folder, original, _ = shared
    path = tmp_path / "runs.db"
    flow = original.ContractEditFlow()
    with Engine(flow, seed=11, store=SQLiteStore(path)) as engine:
        client = engine.client()
        for number in range(1, 4):
            client.start_flow(flow, f"edit-{number}", original.sample_edits(3 + number))
        engine.run_until_idle()
    seen: list[str] = []
    checked = replay_check_store(path, flow, progress=lambda _, __, v: seen.append(v.name))
    assert checked.compatible and len(checked.verdicts) == 3, checked.diverging
    # Each run is replayed once the store's checking pass is past it; reported in store order.
    assert sorted(seen) == [v.name for v in checked.verdicts] == ["edit-1", "edit-2", "edit-3"]


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_each_change_class_keeps_its_verdict_on_shared_engine_runs(shared, change):
    folder, _, histories = shared
    edited = load_variant(folder, CHANGES[change])
    for history in histories:
        check = replay_check(history, edited.ContractEditFlow())
        assert check.compatible is EXPECTED_VERDICTS[change], check.describe()


# ------------------------------------------------------------ an order the code cannot follow


class _Sleep(dexviz.Step[int]):
    seconds = 1

    async def execute(self, context: dexviz.AsyncContext, value: int) -> dexviz.StepDecision:
        await asyncio.sleep(self.seconds)
        return dexviz.dead_end()


class Slow(_Sleep):
    """Sleeps one second, or two in the changed code."""


class Quick(_Sleep):
    """Sleeps one second."""


class Other(_Sleep):
    """Sleeps one second."""


class Fan(dexviz.Step[int]):
    def execute(self, context: dexviz.Context, value: int) -> dexviz.StepDecision:
        return dexviz.go_to_many(
            dexviz.StepMovement(Slow, value),
            dexviz.StepMovement(Quick, value),
            dexviz.StepMovement(Other, value),
        )


class FanFlow(dexviz.Flow[int]):
    def get_steps(self) -> dexviz.StepList[int]:
        return dexviz.StepList.start_step(Fan()).other_steps(Slow(), Quick(), Other())


def _slow_first():
    """A recorded FanFlow run in which Slow's Execute committed before the other two."""
    for seed in range(40):
        history = dexviz.simulate(FanFlow(), 1, seed=seed).history
        done = [e.step_type for e in history if e.kind == EventKind.STEP_EXECUTE_COMPLETED]
        if done[1] == "Slow":
            return history
    raise AssertionError("no seed in 0..39 ran Slow first")


def test_a_recorded_order_the_current_code_cannot_follow_diverges_with_the_event(monkeypatch):
    history = _slow_first()
    assert replay_check(history, FanFlow()).compatible
    monkeypatch.setattr(Slow, "seconds", 2)
    check = replay_check(history, FanFlow())
    divergence = check.first_divergence
    assert divergence is not None and divergence.aspect is Aspect.ORDER
    recorded = history[divergence.seq - 1]
    assert (recorded.kind, recorded.execution_id) == (EventKind.STEP_EXECUTE_COMPLETED, "Slow-1")
    assert (divergence.execution_id, divergence.method) == ("Slow-1", "execute")
    assert divergence.recorded["kind"] == "StepExecuteCompleted"
    # The other two wake at the recorded time; one of them commits in Slow's place.
    assert divergence.replayed["kind"] == "StepExecuteCompleted"
    assert divergence.replayed["execution_id"] in ("Quick-1", "Other-1")
    assert divergence.location is not None
    assert divergence.location.qualname == "_Sleep.execute"
    assert f"#{divergence.seq} Slow-1 execute: order differs" in check.describe()


# ------------------------------------------------------------ the chooser on its own


def _queued(flow_id, execution_id, method):
    run, execution = SimpleNamespace(flow_id=flow_id), SimpleNamespace(execution_id=execution_id)
    return QueuedStart.of(None, run, execution, method)  # type: ignore[arg-type]


def test_the_chooser_picks_the_unit_of_the_next_recorded_event_and_its_waiter():
    history = dexviz.simulate(FanFlow(), 1, seed=0).history
    order = RecordedOrder("flow-1", history.events, dict)
    order.committed(history.events[:7])  # up to the three StepExecutionCreated
    units = [_queued("flow-1", e, "execute") for e in ("Other-1", "Quick-1", "Slow-1")]
    first = history[7].execution_id
    assert units[order.ready(units)][2].execution_id == first
    assert order.divergence is None
    waiters = [SimpleNamespace(execution_id=e) for e in ("Other-1", "Quick-1")]
    assert order.waiter(waiters, {"Other-1"}) == 1


def test_the_chooser_notes_a_divergence_when_no_ready_unit_acts_for_the_next_event():
    history = dexviz.simulate(FanFlow(), 1, seed=0).history
    order = RecordedOrder("flow-1", history.events, dict)
    order.committed(history.events[:7])
    first = history[7].execution_id
    others = [
        _queued("flow-1", e, "execute") for e in ("Other-1", "Quick-1", "Slow-1") if e != first
    ]
    assert order.ready(others) == 0
    divergence = order.divergence
    assert divergence is not None and divergence.seq == 8
    assert divergence.recorded == {
        "kind": "AttemptStarted",
        "execution_id": first,
        "method": "execute",
    }
    assert divergence.replayed == {"ready": [f"{u[2].execution_id} execute" for u in others]}


def test_the_chooser_notes_a_commit_out_of_its_recorded_place():
    history = dexviz.simulate(FanFlow(), 1, seed=0).history
    order = RecordedOrder("flow-1", history.events, dict)
    order.committed(history.events[:7])
    order.committed([history.events[8]])
    divergence = order.divergence
    assert divergence is not None and divergence.seq == 8
    assert divergence.replayed["execution_id"] == history[8].execution_id


# ------------------------------------------------------------ client publishes, two engines' worth

NUMBERS = dexviz.Channel("numbers", int)


class Collect(dexviz.Step[int]):
    def wait_for(self, context: dexviz.Context, value: int) -> dexviz.Wait:
        return dexviz.Wait.until(NUMBERS.for_n(2))

    def execute(self, context: dexviz.Context, value: int) -> dexviz.StepDecision:
        return dexviz.dead_end()


class Start(dexviz.Step[int]):
    def execute(self, context: dexviz.Context, value: int) -> dexviz.StepDecision:
        return dexviz.go_to_many(*(dexviz.StepMovement(Collect, n) for n in range(value)))


class CollectFlow(dexviz.Flow[int]):
    def get_steps(self) -> dexviz.StepList[int]:
        return dexviz.StepList.start_step(Start()).other_steps(Collect())

    def get_persistence_schema(self) -> dexviz.PersistenceSchema:
        return dexviz.PersistenceSchema.of(NUMBERS)


def test_client_publishes_of_flows_sharing_an_engine_reach_the_recorded_waiters():
    flow = CollectFlow()
    with Engine(flow, seed=2) as engine:
        client = engine.client()
        for flow_id in ("left", "right"):
            client.start_flow(flow, flow_id, 3)
        engine.run_until_idle()
        for number in range(6):
            for flow_id in ("left", "right"):
                client.publish(flow_id, NUMBERS, number)
                engine.run_until_idle()
        histories = [engine.history(flow_id) for flow_id in ("left", "right")]
    for history in histories:
        takers = [e.execution_id for e in history if e.kind == EventKind.WAIT_SATISFIED]
        assert len(takers) == 3
        check = replay_check(history, CollectFlow())
        assert check.compatible, check.describe()
        replayed = [e.execution_id for e in check.replayed if e.kind == EventKind.WAIT_SATISFIED]
        assert replayed == takers


class Again(dexviz.Step[int]):
    forever = False

    def execute(self, context: dexviz.Context, value: int) -> dexviz.StepDecision:
        return dexviz.go_to(Again, value) if self.forever else dexviz.dead_end()


class AgainFlow(dexviz.Flow[int]):
    def get_steps(self) -> dexviz.StepList[int]:
        return dexviz.StepList.start_step(Again())


def test_code_that_now_runs_for_ever_is_refused_once_past_the_replays_budget(monkeypatch):
    history = dexviz.simulate(AgainFlow(), 1).history
    assert replay_check(history, AgainFlow()).compatible
    monkeypatch.setattr(Again, "forever", True)
    with pytest.raises(ReplayError, match=r"ran past \d+ units of work where the recorded run"):
        replay_check(history, AgainFlow())


def test_wide_runs_of_a_shared_engine_replay_and_a_changed_decision_still_diverges(shared):
    folder, original, _ = shared
    flow = original.ContractEditFlow()
    with Engine(flow, seed=9) as engine:
        client = engine.client()
        client.start_flow(flow, "wide-a", original.sample_edits(40))
        client.start_flow(flow, "wide-b", original.sample_edits(30))
        engine.run_until_idle()
        histories = [engine.history("wide-a"), engine.history("wide-b")]
    edited = load_variant(folder, CHANGES["changed decision"]).ContractEditFlow()
    for history in histories:  # dozens of first attempts are ready at once
        assert replay_check(history, flow).compatible
        divergence = replay_check(history, edited).first_divergence
        assert divergence is not None and divergence.aspect is Aspect.DECISION
