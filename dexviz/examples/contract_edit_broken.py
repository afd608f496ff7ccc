"""A broken ContractEditFlow: EditContract hands the token back before SaveContractEdit runs.

Everything else is the seed's Flow (``dexviz.examples.contract_edit``). The early hand-back lets
the next reviewer enter while this one is still saving, so two edits overlap — but only in some
interleavings, which is what ``dexviz.explore`` finds.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from dexviz import (
    AsyncContext,
    Context,
    Flow,
    PersistenceSchema,
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
from dexviz.examples.contract_edit import (
    CONTRACT_EDIT_FINISHED,
    CONTRACT_EDIT_RETRY,
    CONTRACT_EDIT_SECONDS,
    CONTRACT_EDIT_TOKEN,
    ContractEdit,
    ContractEditError,
    finish_contract_edit,
)


class StartContractEdits(Step[list[ContractEdit]]):
    """Publish the token; start one edit path per edit and the Step that awaits them."""

    def execute(self, context: Context, edits: list[ContractEdit]) -> StepDecision:
        CONTRACT_EDIT_TOKEN.publish(context, "contract")
        return go_to_many(
            *[StepMovement.of(EnterContractEdit, edit) for edit in edits],
            StepMovement.of(FinishContractEdits, len(edits)),
        )


class EnterContractEdit(Step[ContractEdit]):
    """Takes the token and hands off to EditContract."""

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
    """THE BUG: publishes the token back as soon as the edit is made, before it is saved."""

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
        CONTRACT_EDIT_TOKEN.publish(context, "contract")
        return go_to(SaveContractEdit, started_edit)


class SaveContractEdit(Step[ContractEdit]):
    """Saves the edit; the token is already back in the Channel."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=CONTRACT_EDIT_RETRY).on_execute_failure_proceed_to(
            ReportFailedEdit
        )

    async def execute(  # type: ignore[override]
        self, context: AsyncContext, edit: ContractEdit
    ) -> StepDecision:
        await asyncio.sleep(CONTRACT_EDIT_SECONDS)
        if edit.should_fail_edit:
            raise ContractEditError("contract edit failed")
        CONTRACT_EDIT_FINISHED.publish(context, finish_contract_edit(edit, "saved"))
        return dead_end()


class ReleaseContractEditToken(Step[ContractEdit]):
    """Report the failed edit and release the token."""

    def execute(self, context: Context, edit: ContractEdit) -> StepDecision:
        CONTRACT_EDIT_FINISHED.publish(context, finish_contract_edit(edit, "failed"))
        CONTRACT_EDIT_TOKEN.publish(context, "contract")
        return dead_end()


class ReportFailedEdit(Step[ContractEdit]):
    """Report a failed save (the token went back already, in EditContract)."""

    def execute(self, context: Context, edit: ContractEdit) -> StepDecision:
        CONTRACT_EDIT_FINISHED.publish(context, finish_contract_edit(edit, "failed"))
        return dead_end()


class FinishContractEdits(Step[int]):
    """Wait for every edit to report, then complete with the results."""

    def wait_for(self, context: Context, edit_count: int) -> Wait:
        return Wait.until(CONTRACT_EDIT_FINISHED.for_n(edit_count))

    def execute(self, context: Context, edit_count: int) -> StepDecision:
        return graceful_complete(list(CONTRACT_EDIT_FINISHED.results(context)))


class BrokenContractEditFlow(Flow[list[ContractEdit]]):
    """ContractEditFlow with the token handed back one Step too early."""

    def get_steps(self) -> StepList[list[ContractEdit]]:
        return StepList.start_step(StartContractEdits()).other_steps(
            EnterContractEdit(),
            EditContract(),
            SaveContractEdit(),
            ReleaseContractEditToken(),
            ReportFailedEdit(),
            FinishContractEdits(),
        )

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(CONTRACT_EDIT_TOKEN, CONTRACT_EDIT_FINISHED)
