"""A livelock: two Steps hand a ball back and forth on a timer, and the rally never ends.

``Ping`` and ``Pong`` each wait for the ball (a Channel message) and hold it for a second (a
Timer), then hand it over. The rally is meant to end after ``RALLY_HITS`` hits, but the hit
count is handed over unchanged (the bug: ``hits`` instead of ``hits + 1``), so the Flow stays
open forever. Every run is fair — only one Step can move at a time — and every state comes
back after two seconds of virtual time, so ``checks.eventually_closes()`` finds a lasso: the
serve, then a loop of Ping's and Pong's hits.
"""

from __future__ import annotations

from datetime import timedelta

from dexviz import (
    Channel,
    Context,
    Flow,
    PersistenceSchema,
    Step,
    StepDecision,
    StepList,
    StepMovement,
    Timer,
    Wait,
    go_to,
    go_to_many,
    graceful_complete,
)

RALLY_HITS = 3
"""Hits after which the rally should end."""

HOLD = timedelta(seconds=1)
"""How long a player holds the ball before handing it over (virtual time)."""

PING_BALL = Channel("pingBall", str)
PONG_BALL = Channel("pongBall", str)


class Serve(Step[int]):
    """Put the ball in Ping's court and start both players."""

    def execute(self, context: Context, hits: int) -> StepDecision:
        PING_BALL.publish(context, "ball")
        return go_to_many(StepMovement.of(Ping, hits))


class Ping(Step[int]):
    """Wait for the ball and hold it a second; then hand it to Pong (or end the rally)."""

    def wait_for(self, context: Context, hits: int) -> Wait:
        return Wait.all_of(PING_BALL.for_one(), Timer.by_duration(HOLD))

    def execute(self, context: Context, hits: int) -> StepDecision:
        if hits >= RALLY_HITS:
            return graceful_complete(hits)
        PONG_BALL.publish(context, "ball")
        return go_to(Pong, hits)  # the bug: the hit is never counted (hits + 1)


class Pong(Step[int]):
    """Wait for the ball and hold it a second; then hand it back to Ping."""

    def wait_for(self, context: Context, hits: int) -> Wait:
        return Wait.all_of(PONG_BALL.for_one(), Timer.by_duration(HOLD))

    def execute(self, context: Context, hits: int) -> StepDecision:
        PING_BALL.publish(context, "ball")
        return go_to(Ping, hits)


class RallyFlow(Flow[int]):
    """Ping and Pong hand the ball back and forth until the rally should end (it never does)."""

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Serve()).other_steps(Ping(), Pong())

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(PING_BALL, PONG_BALL)
