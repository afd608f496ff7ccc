"""The fast path and the general path record the same history, byte for byte (R16, R21, R30, R91).

Each Flow below runs twice per seed, once with the fast path and once with it switched off,
and the JSON-lines histories and results must be identical. The Flows mix the cases the fast
path commits itself (sync go_to, dead_end, graceful_complete, publications) with the cases it
hands over (errors, retries, bad decisions, undecodable inputs, writes, cancellations,
generators, timers), so the hand-over points are covered too.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

import pytest

from dexviz import (
    Attribute,
    Channel,
    Context,
    Engine,
    Flow,
    Step,
    StepDecision,
    StepMovement,
    Timer,
    Wait,
    dead_end,
    force_complete,
    go_to,
    go_to_many,
    graceful_complete,
    heartbeat,
)
from dexviz.examples.contract_edit import ContractEdit, ContractEditFlow, sample_edits
from tests.engine.flows_a import NO_RETRY, AdHocFlow, retries

DONE = Channel("fp_done", int)
COUNT = Attribute("fp_count", int)


class Hop(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to(Hop, n + 1) if n < 4 else graceful_complete(n)


class Fan(Step[int]):
    def execute(self, context: Context, width: int) -> StepDecision:
        moves = [StepMovement.of(Leaf, i) for i in range(width)]
        return go_to_many(*moves, StepMovement.of(Join, width))


class Leaf(Step[int]):
    def execute(self, context: Context, i: int) -> StepDecision:
        DONE.publish(context, i)
        if i == 1:
            COUNT.set(context, i)  # a staged write: the general path commits it
        return dead_end()


class Join(Step[int]):
    def wait_for(self, context: Context, width: int) -> Wait:
        return Wait.until(DONE.for_n(width))

    def execute(self, context: Context, width: int) -> StepDecision:
        return graceful_complete(sum(DONE.results(context)))


class Flaky(Step[int]):
    def get_step_options(self) -> Any:
        from dexviz import StepOptions

        return StepOptions(execute_retry=retries(3))

    def execute(self, context: Context, n: int) -> StepDecision:
        if context.attempt < 3:
            raise RuntimeError(f"attempt {context.attempt} of {n} fails")
        return go_to(Beats, n)


class Beats(Step[int]):
    def execute(self, context: Context, n: int) -> Any:
        yield heartbeat(n)
        return go_to(Sleepy, str(n))


class Sleepy(Step[str]):
    def wait_for(self, context: Context, text: str) -> Wait:
        return Wait.until(Timer.of(timedelta(seconds=1)))

    def execute(self, context: Context, text: str) -> StepDecision:
        return force_complete(text)


class Unregistered(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


class BadTarget(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to(Unregistered, n)


class BadInput(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to(Hop, "not an int")


class BadCombination(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return StepDecision(go_to(Hop, 1).kind, (StepMovement(Hop, 1),), output=3)


class Returns(Step[int]):
    def execute(self, context: Context, n: int) -> Any:
        return n


class Cancels(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to(Hop, n).with_canceling_steps(Join)


UNDECLARED = Channel("fp_undeclared", int)


class WaitsUndeclared(Step[int]):
    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(UNDECLARED.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


class WaitsForNothing(Step[int]):
    def wait_for(self, context: Context, n: int) -> Any:
        return n

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


class Huge(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(2**70)


@dataclass(frozen=True)
class Edit:
    """A frozen dataclass input: the fast path checks its copy as the general path does."""

    n: int
    note: str = ""


class AsyncHop(Step[Edit]):
    """A coroutine execute: sleeps, then moves on, fails, or returns what is no decision."""

    def get_step_options(self) -> Any:
        from dexviz import StepOptions

        return StepOptions(execute_retry=retries(2))

    async def execute(self, context: Any, edit: Edit) -> Any:  # type: ignore[override]
        await asyncio.sleep(1)
        if edit.n == 2 and context.attempt == 1:
            raise RuntimeError("the first attempt at 2 fails")
        if edit.n == 3:
            return go_to(AsyncHop, replace(edit, n=4)).with_canceling_steps(Hop)
        if edit.n == 5:
            return go_to(AsyncHop, "not an edit")
        if edit.n >= 6:
            return graceful_complete(edit.n)
        return go_to(AsyncHop, replace(edit, n=edit.n + 1))


class FanEdits(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(*[StepMovement.of(AsyncHop, Edit(i, "x")) for i in range(n)])


def _flows() -> dict[str, tuple[Flow[Any], Any]]:
    bad = NO_RETRY
    return {
        "chain": (AdHocFlow("FpChain", Hop()), 0),
        "fan": (AdHocFlow("FpFan", Fan(), [Leaf(), Join()], [DONE, COUNT]), 5),
        "retries": (AdHocFlow("FpRetry", Flaky(), [Beats(), Sleepy()]), 7),
        "bad_target": (AdHocFlow("FpBadTarget", _with(BadTarget(), bad), [Hop()]), 1),
        "bad_input": (AdHocFlow("FpBadInput", _with(BadInput(), bad), [Hop()]), 1),
        "bad_combination": (AdHocFlow("FpBadCombo", _with(BadCombination(), bad), [Hop()]), 1),
        "not_a_decision": (AdHocFlow("FpReturns", _with(Returns(), bad)), 1),
        "undecodable_start": (AdHocFlow("FpStart", _with(Hop(), bad)), "x"),
        "cancels": (AdHocFlow("FpCancels", Cancels(), [Hop(), Join()], [DONE]), 2),
        "huge_output": (AdHocFlow("FpHuge", _with(Huge(), bad)), 1),
        "undeclared_wait": (AdHocFlow("FpUndeclared", _with(WaitsUndeclared(), bad)), 1),
        "not_a_wait": (AdHocFlow("FpNotAWait", _with(WaitsForNothing(), bad)), 1),
        "contract_edit": (ContractEditFlow(), [ContractEdit(f"r{i}") for i in range(3)]),
        "contract_edit_exits": (ContractEditFlow(), sample_edits(8)),
        "async": (AdHocFlow("FpAsync", FanEdits(), [AsyncHop(), Hop()]), 1),
        # Three coroutines asleep at once, one of them on its retry; one fails the Flow while
        # another is in flight, whose ended Task stays on its execution (test_engine_state
        # snapshots these Flows after every commit).
        "async_several": (AdHocFlow("FpAsyncMany", FanEdits(), [AsyncHop(), Hop()]), 3),
    }


def _with(step: Step[Any], options: Any) -> Step[Any]:
    step.get_step_options = lambda: options  # type: ignore[method-assign]
    return step


def _run(flow: Flow[Any], input: Any, seed: int, fast: bool) -> tuple[str, str, int]:
    engine = Engine([flow], seed=seed)
    fast_path = engine._rt.fast
    fast_path.enabled = fast
    committed = 0
    apply = fast_path._apply

    def counting(*args: Any) -> None:
        nonlocal committed
        committed += 1
        apply(*args)

    fast_path._apply = counting  # type: ignore[method-assign]
    try:
        engine.client().start_flow(flow, "flow-1", input)
    except Exception as error:  # noqa: BLE001 - an undecodable start input is the case
        return type(error).__name__ + str(error), "", 0
    engine.run()
    return engine.history("flow-1").to_jsonl(), repr(engine.result("flow-1")), committed


@pytest.mark.parametrize("name", sorted(_flows()))
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_fast_and_general_paths_record_the_same_history(name: str, seed: int) -> None:
    flow, input = _flows()[name]
    fast_history, fast_result, fast_commits = _run(flow, input, seed, fast=True)
    flow, input = _flows()[name]
    slow_history, slow_result, slow_commits = _run(flow, input, seed, fast=False)
    assert fast_history == slow_history
    assert fast_result == slow_result
    assert slow_commits == 0


def test_the_fast_path_commits_the_common_transitions() -> None:
    flow, input = _flows()["chain"]
    _, result, commits = _run(flow, input, 0, fast=True)
    assert commits == 5 and "COMPLETED" in result
    flow, input = _flows()["fan"]
    _, _, commits = _run(flow, input, 0, fast=True)
    assert commits == 1 + 4 + 1  # Fan, the Leaves without a write, and Join
    assert "StepWaitForCompleted" in _run(flow, input, 0, fast=True)[0]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("bad_target", "Step 'Unregistered' is not registered"),
        ("bad_input", "input of go_to Hop"),
        ("bad_combination", "a go_to decision cannot carry an output"),
        ("not_a_decision", "returned int instead of a StepDecision"),
        ("undeclared_wait", "Channel 'fp_undeclared' is not declared"),
        ("not_a_wait", "returned int instead of a Wait"),
    ],
)
def test_bad_decisions_are_rejected_with_the_general_paths_error(name: str, message: str) -> None:
    flow, input = _flows()[name]
    history, result, _ = _run(flow, input, 0, fast=True)
    assert message in history
    assert "FAILED" in result
