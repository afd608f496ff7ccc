"""Fingerprints: equal only for states with the same future; None where that cannot be told."""

from __future__ import annotations

from typing import Any

from dexviz import Engine
from dexviz.examples.contract_edit import ContractEdit, ContractEditFlow
from dexviz.explore import checks
from dexviz.explore.api import _setup
from dexviz.explore.checks import as_check, monitor_state
from dexviz.explore.fingerprint import fingerprint
from dexviz.explore.schedule import run_schedule
from dexviz.explore.schedule_records import Option, StepRecord
from tests.explore.flows import TimerRaceFlow

FLOW = ContractEditFlow()


def _finished(seed: int, reviewer: str) -> Engine:
    engine = Engine([FLOW], seed=seed)
    engine.client().start_flow(FLOW, "f", [ContractEdit(reviewer, should_withdraw=True)])
    engine.run()
    return engine


def test_message_ids_and_run_ids_are_names_not_state() -> None:
    one, two = _finished(1, "a"), _finished(2, "a")
    ids = [[m.message_id for m in e._rt.runs["f"].queues_view["contractEditToken"]]
           for e in (one, two)]  # fmt: skip
    assert ids[0] != ids[1] and one._rt.runs["f"].run_id != two._rt.runs["f"].run_id
    assert fingerprint(one._rt, ()) == fingerprint(two._rt, ()) is not None


def test_a_different_value_or_outside_state_is_a_different_state() -> None:
    a, b = _finished(1, "a"), _finished(1, "b")
    assert fingerprint(a._rt, ()) != fingerprint(b._rt, ())
    assert fingerprint(a._rt, ((1,),)) != fingerprint(a._rt, ((0,),))


def test_an_object_known_only_by_its_address_makes_the_state_opaque() -> None:
    assert fingerprint(_finished(1, "a")._rt, (object(),)) is None


class _Recording:
    """Takes the first option everywhere and keeps each step's fingerprint."""

    prunes = True

    def __init__(self) -> None:
        self.prints: list[str | None] = []

    def choose(self, kind: str, options: tuple[Option, ...]) -> int | None:
        return 0

    def stepped(self, step: StepRecord) -> None:
        del step

    def revisit(self, step: StepRecord, describe: Any) -> bool:
        self.prints.append(step.fingerprint)
        return False


def test_a_suspended_coroutine_makes_the_state_opaque() -> None:
    # Sleeper awaits asyncio.sleep: its frame is not visible, so those states have none.
    setup = _setup(TimerRaceFlow(), 2, [checks.terminates()], (), None, None, None, "flow-1")
    policy = _Recording()
    run_schedule(setup, policy)
    assert None in policy.prints
    assert any(p is not None for p in policy.prints)


def test_a_plain_callable_check_keeps_no_state() -> None:
    assert monitor_state(as_check(lambda history, state: True).monitor()) is None
    assert monitor_state(checks.exclusive("t").monitor()) == ()
    assert monitor_state(checks.conserved("t").monitor()) == (False, ())


def test_keying_a_state_leaves_finished_executions_shareable_by_snapshots() -> None:
    # A snapshot shares a settled execution instead of copying it; reading an execution's
    # timers or held messages for a key must not create their containers and unsettle it.
    from dexviz.engine.state_copy import settled
    from dexviz.explore.stateful import LocalExpander, StateHandle

    setup = _setup(ContractEditFlow(), [ContractEdit("a"), ContractEdit("b")], [], (), None,
                   None, None, "flow-1")  # fmt: skip
    local = LocalExpander(setup)
    level = [StateHandle((), 0)]
    for _ in range(3):
        level = [s.handle for e in local.expand_all(level) for s in e.successors][:1]
    (run,) = local.bench.engine.runtime.runs.values()
    finished = [ex for ex in run.executions.values()
                if not ex.active and ex.task is None and ex.pending_unit is None]  # fmt: skip
    assert finished and all(settled(ex) for ex in finished)
