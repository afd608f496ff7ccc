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
    StepOptions,
    Wait,
    dead_end,
    go_to,
    go_to_many,
    graceful_complete,
)
from dexviz.examples.contract_edit import (
    CONTRACT_EDIT_FINISHED,
    CONTRACT_EDIT_RETRY,
    CONTRACT_EDIT_TOKEN,
    ContractEdit,
    FinishContractEdits,
    ReleaseContractEditToken,
    finish_contract_edit,
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


class SyncStartContractEdits(Step[list[ContractEdit]]):
    """ContractEditFlow's start, going to the synchronous edit path."""

    def execute(self, context: Context, edits: list[ContractEdit]) -> StepDecision:
        CONTRACT_EDIT_TOKEN.publish(context, "contract")
        return go_to_many(
            *[StepMovement.of(SyncEnterContractEdit, edit) for edit in edits],
            StepMovement.of(FinishContractEdits, len(edits)),
        )


class SyncEnterContractEdit(Step[ContractEdit]):
    """EnterContractEdit, going to the synchronous EditContract."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=CONTRACT_EDIT_RETRY).on_execute_failure_proceed_to(
            ReleaseContractEditToken
        )

    def wait_for(self, context: Context, edit: ContractEdit) -> Wait:
        return Wait.until(CONTRACT_EDIT_TOKEN.for_one())

    def execute(self, context: Context, edit: ContractEdit) -> StepDecision:
        return go_to(SyncEditContract, edit)


class SyncEditContract(Step[ContractEdit]):
    """EditContract without its ``asyncio.sleep``: a withdrawal or on to the save."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=CONTRACT_EDIT_RETRY).on_execute_failure_proceed_to(
            ReleaseContractEditToken
        )

    def execute(self, context: Context, edit: ContractEdit) -> StepDecision:
        if edit.should_withdraw:
            CONTRACT_EDIT_FINISHED.publish(context, finish_contract_edit(edit, "withdrawn"))
            CONTRACT_EDIT_TOKEN.publish(context, "contract")
            return dead_end()
        return go_to(SyncSaveContractEdit, edit)


class SyncSaveContractEdit(Step[ContractEdit]):
    """SaveContractEdit without its ``asyncio.sleep``: record the edit, hand the token on."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=CONTRACT_EDIT_RETRY).on_execute_failure_proceed_to(
            ReleaseContractEditToken
        )

    def execute(self, context: Context, edit: ContractEdit) -> StepDecision:
        CONTRACT_EDIT_FINISHED.publish(context, finish_contract_edit(edit, "saved"))
        CONTRACT_EDIT_TOKEN.publish(context, "contract")
        return dead_end()


class SyncContractEditFlow(Flow[list[ContractEdit]]):
    """The seed's ContractEditFlow with synchronous handlers: every state can be snapshotted.

    The same token Channel, edit paths, retry policy and release Step; the explorer's own cost
    per transition shows without replays (a handler suspended in ``asyncio.sleep`` cannot be
    snapshotted, so the seed Flow's states in one are reached by replaying their trace).
    """

    def get_steps(self) -> StepList[list[ContractEdit]]:
        return StepList.start_step(SyncStartContractEdits()).other_steps(
            SyncEnterContractEdit(),
            SyncEditContract(),
            SyncSaveContractEdit(),
            ReleaseContractEditToken(),
            FinishContractEdits(),
        )

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(CONTRACT_EDIT_TOKEN, CONTRACT_EDIT_FINISHED)
