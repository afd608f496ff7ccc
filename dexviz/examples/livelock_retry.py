"""A livelock: a Step reschedules itself forever for a message that never comes.

``AwaitApproval`` waits for an approval or five seconds, whichever comes first, and when the
five seconds win it goes to itself again — with no limit (the bug: it should give up after a
few reminders). Nothing ever publishes the approval: the approver the Flow was written for is
not started. Meanwhile ``KeepAlive`` beats every two seconds, forever. The two timers bring
the state back every ten seconds of virtual time, and both Steps get their turn on the loop,
so the loop is fair and ``checks.eventually_closes()`` reports it as a lasso. With an approver
(``Action.publish(APPROVAL, "ok")``, a client call that may land at any point and, being fair,
eventually does) the same Flow is proven live.
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
    force_complete,
    go_to,
    go_to_many,
)

REMINDER = timedelta(seconds=5)
"""How long AwaitApproval waits for the approval before trying again."""

BEAT = timedelta(seconds=2)
"""How often KeepAlive beats."""

APPROVAL = Channel("approval", str)


class RequestApproval(Step[str]):
    """Start waiting for the approval, and the keep-alive beside it."""

    def execute(self, context: Context, document: str) -> StepDecision:
        return go_to_many(
            StepMovement.of(AwaitApproval, document), StepMovement.of(KeepAlive, document)
        )


class AwaitApproval(Step[str]):
    """Wait for the approval or the reminder timer; on the timer, wait again (no limit)."""

    def wait_for(self, context: Context, document: str) -> Wait:
        return Wait.any_of(APPROVAL.for_one(), Timer.by_duration(REMINDER))

    def execute(self, context: Context, document: str) -> StepDecision:
        if APPROVAL.results(context):
            return force_complete(document)  # closes the Flow, ending the keep-alive too
        return go_to(AwaitApproval, document)


class KeepAlive(Step[str]):
    """Beat every two seconds while the Flow is open."""

    def wait_for(self, context: Context, document: str) -> Wait:
        return Wait.until(Timer.by_duration(BEAT))

    def execute(self, context: Context, document: str) -> StepDecision:
        return go_to(KeepAlive, document)


class ApprovalFlow(Flow[str]):
    """Wait for a document's approval, reminding every five seconds (forever: the bug)."""

    def get_steps(self) -> StepList[str]:
        return StepList.start_step(RequestApproval()).other_steps(AwaitApproval(), KeepAlive())

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(APPROVAL)
