"""Small Flows for the exploration tests: each has a few racing units, waits, or client calls.

Each ``Case`` is a Flow, its input, the actions and fault budget to explore it with, and is small
enough that ``"dfs"`` enumerates every schedule in a moment, so ``"dpor"`` can be compared with it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from dexviz import (
    AsyncContext,
    Attribute,
    Channel,
    Context,
    Flow,
    PersistenceSchema,
    RetryPolicy,
    RPCResult,
    Step,
    StepDecision,
    StepList,
    StepMovement,
    StepOptions,
    Timer,
    Wait,
    current_time_millis,
    dead_end,
    force_complete,
    go_to,
    go_to_many,
    graceful_complete,
    rpc,
)
from dexviz.engine.core.choice import FaultBudget
from dexviz.examples.contract_edit import (
    CONTRACT_EDIT_TOKEN,
    ContractEdit,
    ContractEditFlow,
    SaveContractEdit,
)
from dexviz.examples.contract_edit_broken import BrokenContractEditFlow
from dexviz.explore import Action

DONE = Channel("done", str)
ITEM = Channel("item", int)
GO = Channel("go", str)
NOTE = Attribute("note", str)
TWO_TRIES = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=2)


class Fan(Step[int]):
    """Start ``n`` workers and a joiner."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(
            *[StepMovement.of(Work, i) for i in range(n)], StepMovement.of(Join, n)
        )


class Work(Step[int]):
    """Publish its number, write the note (last write wins)."""

    def execute(self, context: Context, i: int) -> StepDecision:
        DONE.publish(context, f"w{i}")
        NOTE.set(context, f"w{i}")
        return dead_end()


class Join(Step[int]):
    """Wait for every worker; complete with the arrival order and the note."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(DONE.for_n(n))

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete([*DONE.results(context), NOTE.get(context)])


class FanFlow(Flow[int]):
    """Workers race to publish and to write one Attribute."""

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Fan()).other_steps(Work(), Join())

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(DONE, NOTE)


class Two(Step[int]):
    """Start two takers and one giver of a single message."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(
            StepMovement.of(Take, 1), StepMovement.of(Take, 2), StepMovement.of(Give, n)
        )


class Take(Step[int]):
    """Take one item; the first taker force-completes the Flow with who it was."""

    def wait_for(self, context: Context, who: int) -> Wait:
        return Wait.until(ITEM.for_one())

    def execute(self, context: Context, who: int) -> StepDecision:
        return force_complete(who)


class Give(Step[int]):
    """Publish ``n`` items."""

    def execute(self, context: Context, n: int) -> StepDecision:
        for value in range(n):
            ITEM.publish(context, value)
        return dead_end()


class RaceFlow(Flow[int]):
    """Two takers race for one message; the loser is canceled (or stalls, with none left)."""

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Two()).other_steps(Take(), Give())

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(ITEM)


class Doze(Step[int]):
    """Start a sleeper and a waiter that gives up after ``seconds``."""

    def execute(self, context: Context, seconds: int) -> StepDecision:
        return go_to_many(StepMovement.of(Sleeper, seconds), StepMovement.of(Patient, seconds))


class Sleeper(Step[int]):
    """Sleep ``seconds`` of virtual time, then publish."""

    async def execute(  # type: ignore[override]
        self, context: AsyncContext, seconds: int
    ) -> StepDecision:
        await asyncio.sleep(seconds)
        GO.publish(context, "late")
        return dead_end()


class Patient(Step[int]):
    """Wait for the message or a timer of the same length: both are due at one instant."""

    def wait_for(self, context: Context, seconds: int) -> Wait:
        return Wait.any_of(GO.for_one(), Timer.by_duration(timedelta(seconds=seconds)))

    def execute(self, context: Context, seconds: int) -> StepDecision:
        return force_complete(len(GO.results(context)))


class TimerRaceFlow(Flow[int]):
    """A message and a timer due at the same instant."""

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Doze()).other_steps(Sleeper(), Patient())

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(GO)


class Listen(Step[str]):
    """Wait for an outside message, then complete with it and the note."""

    def wait_for(self, context: Context, tag: str) -> Wait:
        return Wait.until(GO.for_one())

    def execute(self, context: Context, tag: str) -> StepDecision:
        return graceful_complete([tag, *GO.results(context), NOTE.get(context)])


class Tick(Step[str]):
    """A sync Step retried once that goes on to Listen."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=TWO_TRIES)

    def execute(self, context: Context, tag: str) -> StepDecision:
        return go_to(Listen, tag)


class ClientFlow(Flow[str]):
    """Waits for the client: publish, set_attribute and an RPC race with its own Steps."""

    def get_steps(self) -> StepList[str]:
        return StepList.start_step(Tick()).other_steps(Listen())

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(GO, NOTE)

    @rpc
    def annotate(self, context: Context, text: str) -> RPCResult[str]:
        NOTE.set(context, text)
        return RPCResult(text)


class Deadline(Step[int]):
    """Wait for a message or ``seconds``; complete with what came and when."""

    def wait_for(self, context: Context, seconds: int) -> Wait:
        return Wait.any_of(GO.for_one(), Timer.by_duration(timedelta(seconds=seconds)))

    def execute(self, context: Context, seconds: int) -> StepDecision:
        return graceful_complete([len(GO.results(context)), current_time_millis() // 1000])


class DeadlineFlow(Flow[int]):
    """A client call may land before the deadline, at it, or after the Flow closed."""

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Deadline())

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(GO)


class Bump(Step[int]):
    """Read-modify-write the note under its lock; the last one completes with what it saw."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_lock_attributes=(NOTE.lock(),))

    def execute(self, context: Context, i: int) -> StepDecision:
        seen = NOTE.get(context) or ""
        NOTE.set(context, seen + str(i))
        return graceful_complete(seen) if len(seen) == 1 else dead_end()


class Pair(Step[int]):
    """Start two bumpers."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(Bump, 1), StepMovement.of(Bump, 2))


class LockFlow(Flow[int]):
    """Two Steps take the same Attribute lock (every step is then treated as dependent)."""

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Pair()).other_steps(Bump())

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(NOTE)


@dataclass(frozen=True)
class Case:
    """One Flow to explore, with its input and what to interleave."""

    name: str
    flow: Flow[Any]
    input: Any
    actions: tuple[Action, ...] = ()
    faults: FaultBudget | None = None
    extra: dict[str, Any] = field(default_factory=dict)


ACTIONS = (
    Action.publish(GO, "x"),
    Action.stop_flow(),
    Action.set_attribute(NOTE, "client"),
    Action.invoke_rpc(ClientFlow.annotate, "rpc"),
)
"""Client calls the generated cases draw from."""


def _edits(count: int, withdraw: int = 0) -> list[ContractEdit]:
    return [ContractEdit(f"r{i}", should_withdraw=i == withdraw) for i in range(1, count + 1)]


CASES = (
    Case("contract-2", ContractEditFlow(), _edits(2)),
    Case("contract-2-withdraw", ContractEditFlow(), _edits(2, withdraw=2)),
    Case("contract-1-extra-token", ContractEditFlow(), _edits(1),
         actions=(Action.publish(CONTRACT_EDIT_TOKEN, "extra"),)),
    Case("contract-2-save-fails", ContractEditFlow(), _edits(2),
         faults=FaultBudget.of(SaveContractEdit, count=1)),
    Case("broken-contract-2", BrokenContractEditFlow(), _edits(2)),
    Case("fan-3", FanFlow(), 3),
    Case("race-1", RaceFlow(), 1),
    Case("race-2", RaceFlow(), 2),
    Case("timer-race", TimerRaceFlow(), 2),
    Case("client-publish", ClientFlow(), "t", actions=(Action.publish(GO, "x"),)),
    Case("client-publish-stop", ClientFlow(), "t",
         actions=(Action.publish(GO, "x"), Action.stop_flow())),
    Case("client-attribute", ClientFlow(), "t",
         actions=(Action.set_attribute(NOTE, "client"), Action.publish(GO, "x"))),
    Case("client-rpc", ClientFlow(), "t",
         actions=(Action.invoke_rpc(ClientFlow.annotate, "rpc"), Action.publish(GO, "x"))),
    Case("locks", LockFlow(), 0),
    Case("deadline-publish", DeadlineFlow(), 5, actions=(Action.publish(GO, "x"),)),
    Case("tick-fails", ClientFlow(), "t", actions=(Action.publish(GO, "x", count=2),),
         faults=FaultBudget.of(Tick, count=1)),
)
