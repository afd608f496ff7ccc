"""The Critical Section seed's ContractEditFlow: reviewers take turns holding one edit token.

The Steps below are the seed page's Python code; the data classes, the error, the helper
``finish_contract_edit``, ``StartContractEdits``, ``FinishContractEdits`` and the Flow class
are written around it, as the page describes them in prose.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from datetime import timedelta

from dexviz import (
    AsyncContext,
    Channel,
    Context,
    Flow,
    PersistenceSchema,
    RetryPolicy,
    Step,
    StepDecision,
    StepList,
    StepMovement,
    StepOptions,
    Wait,
    current_time_millis,
    dead_end,
    go_to,
    go_to_many,
    graceful_complete,
)

CONTRACT_EDIT_SECONDS = 2
"""How long EditContract and SaveContractEdit each hold the contract, in (virtual) seconds."""


@dataclass(frozen=True)
class ContractEdit:
    """One reviewer's edit request; the flags simulate the section's other exits."""

    reviewer: str
    should_fail_handoff: bool = False
    should_fail_edit: bool = False
    should_withdraw: bool = False
    started_at_millis: int = 0


@dataclass(frozen=True)
class ContractEditRecord:
    """What one edit reports when it leaves the section: saved, failed or withdrawn."""

    reviewer: str
    outcome: str
    started_at_millis: int
    finished_at_millis: int


class ContractEditError(Exception):
    """Raised by a Step of the section to simulate a failed handoff or a failed edit."""


CONTRACT_EDIT_TOKEN = Channel("contractEditToken", str)
CONTRACT_EDIT_FINISHED = Channel("contractEditFinished", ContractEditRecord)
CONTRACT_EDIT_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1), maximum_attempts=2
)


def finish_contract_edit(edit: ContractEdit, outcome: str) -> ContractEditRecord:
    """Record the edit; an edit that never started has an empty interval at its finish time."""
    finished_at_millis = current_time_millis()
    started_at_millis = edit.started_at_millis or finished_at_millis
    return ContractEditRecord(
        reviewer=edit.reviewer,
        outcome=outcome,
        started_at_millis=started_at_millis,
        finished_at_millis=finished_at_millis,
    )


class StartContractEdits(Step[list[ContractEdit]]):
    """Start one edit path per contract edit and the Step that awaits them."""

    def execute(self, context: Context, edits: list[ContractEdit]) -> StepDecision:
        CONTRACT_EDIT_TOKEN.publish(context, "contract")
        return go_to_many(
            *[StepMovement.of(EnterContractEdit, edit) for edit in edits],
            StepMovement.of(FinishContractEdits, len(edits)),
        )


class EnterContractEdit(Step[ContractEdit]):
    """Takes the token and hands off; it does no protected work, so canceling it is safe."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=CONTRACT_EDIT_RETRY).on_execute_failure_proceed_to(
            ReleaseContractEditToken
        )

    def wait_for(self, context: Context, edit: ContractEdit) -> Wait:
        return Wait.until(CONTRACT_EDIT_TOKEN.for_one())

    def execute(self, context: Context, edit: ContractEdit) -> StepDecision:
        if edit.should_fail_handoff:
            raise ContractEditError("contract handoff failed")
        return go_to(EditContract, edit)


class EditContract(Step[ContractEdit]):
    """The first Step that works on the contract. Never cancel it."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=CONTRACT_EDIT_RETRY).on_execute_failure_proceed_to(
            ReleaseContractEditToken
        )

    async def execute(  # type: ignore[override]
        self, context: AsyncContext, edit: ContractEdit
    ) -> StepDecision:
        started_edit = replace(edit, started_at_millis=current_time_millis())
        if started_edit.should_withdraw:
            CONTRACT_EDIT_FINISHED.publish(
                context, finish_contract_edit(started_edit, "withdrawn")
            )
            CONTRACT_EDIT_TOKEN.publish(context, "contract")
            return dead_end()
        await asyncio.sleep(CONTRACT_EDIT_SECONDS)
        return go_to(SaveContractEdit, started_edit)


class SaveContractEdit(Step[ContractEdit]):
    """The last Step of the section; it records the edit and publishes the token back."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=CONTRACT_EDIT_RETRY).on_execute_failure_proceed_to(
            ReleaseContractEditToken
        )

    async def execute(  # type: ignore[override]
        self, context: AsyncContext, edit: ContractEdit
    ) -> StepDecision:
        await asyncio.sleep(CONTRACT_EDIT_SECONDS)
        if edit.should_fail_edit:
            raise ContractEditError("contract edit failed")
        CONTRACT_EDIT_FINISHED.publish(context, finish_contract_edit(edit, "saved"))
        CONTRACT_EDIT_TOKEN.publish(context, "contract")
        return dead_end()


class ReleaseContractEditToken(Step[ContractEdit]):
    """Report the failed edit and release the token."""

    def execute(self, context: Context, edit: ContractEdit) -> StepDecision:
        CONTRACT_EDIT_FINISHED.publish(context, finish_contract_edit(edit, "failed"))
        CONTRACT_EDIT_TOKEN.publish(context, "contract")
        return dead_end()


class FinishContractEdits(Step[int]):
    """Wait for every edit to report, then complete with the results."""

    def wait_for(self, context: Context, edit_count: int) -> Wait:
        return Wait.until(CONTRACT_EDIT_FINISHED.for_n(edit_count))

    def execute(self, context: Context, edit_count: int) -> StepDecision:
        records = CONTRACT_EDIT_FINISHED.results(context)
        return graceful_complete(list(records))


class ContractEditFlow(Flow[list[ContractEdit]]):
    """Reviewers edit one contract in turn; the token Channel keeps their edits apart."""

    def get_steps(self) -> StepList[list[ContractEdit]]:
        return StepList.start_step(StartContractEdits()).other_steps(
            EnterContractEdit(),
            EditContract(),
            SaveContractEdit(),
            ReleaseContractEditToken(),
            FinishContractEdits(),
        )

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(CONTRACT_EDIT_TOKEN, CONTRACT_EDIT_FINISHED)


def sample_edits(count: int = 8) -> list[ContractEdit]:
    """Build ``count`` reviewers' edits; every third to fifth one takes another exit.

    Reviewer 2 fails its handoff, reviewer 4 fails its edit twice (so it is routed to the
    release Step), and reviewer 6 withdraws; the others save.
    """
    edits = []
    for number in range(1, count + 1):
        edits.append(
            ContractEdit(
                reviewer=f"reviewer-{number}",
                should_fail_handoff=number % 8 == 2,
                should_fail_edit=number % 8 == 4,
                should_withdraw=number % 8 == 6,
            )
        )
    return edits


EXPECTED_OUTCOMES = {2: "failed", 4: "failed", 6: "withdrawn"}
"""Outcome by reviewer number (modulo 8) for ``sample_edits``; every other reviewer saves."""
