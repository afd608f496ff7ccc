"""The chooser (R46, R168: Dex promises no order among ready work or waiters).

Every open choice goes through one Chooser: the seeded default replays today's runs byte for
byte, another chooser changes only what it is asked, and a FaultBudget's failures fire exactly
where the chooser says, never beyond the budget.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence, Set
from typing import Any

import pytest

from dexviz import Engine, EventKind, FaultPlan, FlowStatus
from dexviz.engine.core.choice import ChoiceKind, FaultBudget, FaultPoint, SeededChooser
from dexviz.examples.contract_edit import ContractEditFlow, SaveContractEdit, sample_edits

FLOW = ContractEditFlow()


class RecordingChooser:
    """Picks the first option and remembers what it was asked."""

    def __init__(self, fire_at: int | None = None) -> None:
        self.asked: list[tuple[ChoiceKind, int]] = []
        self.points: list[FaultPoint] = []
        self.fire_at = fire_at

    def ready(self, units: Sequence[Callable[[], None]]) -> int:
        self.asked.append((ChoiceKind.READY, len(units)))
        return 0

    def waiter(self, waiters: Sequence[Any], unready: Set[str]) -> int:
        self.asked.append((ChoiceKind.WAITER, len(waiters)))
        return len(waiters) - 1

    def fault(self, point: FaultPoint) -> bool:
        self.points.append(point)
        return self.fire_at is not None and len(self.points) - 1 == self.fire_at


def _jsonl(engine: Engine) -> str:
    engine.run_until_idle()
    return engine.history("c").to_jsonl()


def _engine(**kwargs: Any) -> Engine:
    engine = Engine([FLOW], **kwargs)
    engine.client().start_flow(FLOW, "c", sample_edits(5))
    return engine


@pytest.mark.parametrize("seed", [0, 1, 7, 42])
def test_r46_seeded_chooser_replays_the_seed_byte_for_byte(seed: int) -> None:
    by_seed = _jsonl(_engine(seed=seed))
    by_chooser = _jsonl(_engine(seed=seed, chooser=SeededChooser(random.Random(seed))))
    assert by_seed == by_chooser
    assert by_seed == _jsonl(_engine(seed=seed))


def test_r168_every_ready_and_waiter_choice_goes_through_the_chooser() -> None:
    chooser = RecordingChooser()
    engine = _engine(chooser=chooser)
    engine.run_until_idle()
    kinds = {kind for kind, _ in chooser.asked}
    assert kinds == {ChoiceKind.READY, ChoiceKind.WAITER}
    assert all(count > 1 for _, count in chooser.asked)
    assert engine.result("c").status is FlowStatus.COMPLETED
    again = RecordingChooser()
    assert _jsonl(_engine(chooser=again)) == engine.history("c").to_jsonl()
    assert again.asked == chooser.asked


def test_runnable_lists_what_pop_chooses_among_and_advances_time() -> None:
    engine = _engine(seed=0)
    scheduler = engine._rt.sim
    assert scheduler is not None
    assert len(scheduler.runnable()) == 1
    engine.step()
    assert len(scheduler.runnable()) == 6
    engine.run_until_idle()
    assert scheduler.runnable() == []


def test_budget_failure_fires_where_the_chooser_says_and_only_once() -> None:
    chooser = RecordingChooser(fire_at=1)
    plan = FaultPlan(budget=FaultBudget.of(SaveContractEdit, count=1))
    engine = _engine(chooser=chooser, faults=plan)
    engine.run_until_idle()
    failed = [
        e
        for e in engine.history("c")
        if e.kind == EventKind.ATTEMPT_FAILED and "(budget)" in str(e.payload)
    ]
    assert len(failed) == 1
    assert failed[0].execution_id == chooser.points[1].execution_id
    # After the budget is spent the chooser is not asked again.
    assert len(chooser.points) == 2
    assert plan.spent == 1
    assert engine.result("c").status is FlowStatus.COMPLETED


def test_seeded_chooser_fires_no_budget_failure() -> None:
    plan = FaultPlan(budget=FaultBudget.of("SaveContractEdit", count=3))
    engine = _engine(seed=3, faults=plan)
    assert _jsonl(engine) == _jsonl(_engine(seed=3))
    assert plan.spent == 0


def test_budget_covers_only_its_steps_and_method() -> None:
    budget = FaultBudget.of(SaveContractEdit, "EditContract", count=2)
    assert budget.step_types == ("SaveContractEdit", "EditContract")
    assert budget.covers("EditContract", "execute")
    assert not budget.covers("EditContract", "wait_for")
    assert not budget.covers("EnterContractEdit", "execute")
    assert str(budget) == "up to 2 failures of SaveContractEdit, EditContract.execute"


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((), {}, "at least one Step"),
        (("S",), {"method": "run"}, "method must be"),
        (("S",), {"count": -1}, "count must be >= 0"),
    ],
)
def test_budget_rejects_bad_input(
    args: tuple[Any, ...], kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        FaultBudget.of(*args, **kwargs)


@pytest.mark.parametrize("misplaced", [1, 2.0, None, True])
def test_a_fault_budget_refuses_a_count_given_as_a_step(misplaced):
    with pytest.raises(TypeError, match=r"a count goes by keyword \(count=\.\.\.\)"):
        FaultBudget.of("SaveContractEdit", misplaced)
