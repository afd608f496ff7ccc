"""Flows the benchmarks run: a sequential chain, a fan-out with a join, and a token hand-off."""

from __future__ import annotations

from dexviz import (
    Channel,
    Context,
    Flow,
    PersistenceSchema,
    Step,
    StepDecision,
    StepList,
    StepMovement,
    Wait,
    dead_end,
    go_to,
    go_to_many,
    graceful_complete,
)

CHAIN_LENGTH = 10
DONE = Channel("done", int)
TOKEN = Channel("token", str)


class Link(Step[int]):
    """One Step of a chain; the tenth completes the Flow."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to(Link, n + 1) if n + 1 < CHAIN_LENGTH else graceful_complete(n)


class Chain(Flow[int]):
    """Ten Steps in a row."""

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Link())


class Fan(Step[int]):
    """Start ``width`` branches and the join."""

    def execute(self, context: Context, width: int) -> StepDecision:
        return go_to_many(
            *[StepMovement.of(Branch, i) for i in range(width)], StepMovement.of(Join, width)
        )


class Branch(Step[int]):
    """Report one result."""

    def execute(self, context: Context, i: int) -> StepDecision:
        DONE.publish(context, i)
        return dead_end()


class Join(Step[int]):
    """Wait for every branch."""

    def wait_for(self, context: Context, width: int) -> Wait:
        return Wait.until(DONE.for_n(width))

    def execute(self, context: Context, width: int) -> StepDecision:
        return graceful_complete(len(DONE.results(context)))


class FanOut(Flow[int]):
    """A fan-out of ``width`` branches joined by one Step."""

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Fan()).other_steps(Branch(), Join())

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(DONE)


class Contend(Step[int]):
    """Start ``contenders`` branches that each take the token ``rounds`` times."""

    def execute(self, context: Context, contenders: int) -> StepDecision:
        TOKEN.publish(context, "t")
        return go_to_many(*[StepMovement.of(Take, ROUNDS) for _ in range(contenders)])


ROUNDS = 1


class Take(Step[int]):
    """Wait for the token, then hand it on; loop ``left`` times."""

    def wait_for(self, context: Context, left: int) -> Wait:
        return Wait.until(TOKEN.for_one())

    def execute(self, context: Context, left: int) -> StepDecision:
        TOKEN.publish(context, "t")
        return go_to(Take, left - 1) if left > 1 else dead_end()


class Handoff(Flow[int]):
    """Contenders passing one token around."""

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Contend()).other_steps(Take())

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(TOKEN)


class Park(Step[int]):
    """Wait on a Channel that nobody publishes to."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(TOKEN.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


class Idle(Flow[int]):
    """A Flow parked on a Channel."""

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Park())

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(TOKEN)
