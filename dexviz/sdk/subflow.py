"""SubFlow: a wait condition that starts a child Flow and completes when the child closes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dexviz.sdk.condition import SubFlowCondition

if TYPE_CHECKING:
    from dexviz.sdk.context import Context
    from dexviz.sdk.flow_options import SubFlowOptions
    from dexviz.sdk.results import FlowResult


class SubFlow:
    """Factory and accessors for SubFlow conditions."""

    @staticmethod
    def run(
        flow: Any, input: Any = None, options: SubFlowOptions | None = None
    ) -> SubFlowCondition:
        """Start (or reuse) a child run of the registered ``flow`` when the WaitFor commits."""
        condition_id = options.condition_id if options is not None else None
        return SubFlowCondition(flow=flow, input=input, options=options, condition_id=condition_id)

    @staticmethod
    def get_condition_results(context: Context, index: int = 0) -> FlowResult:
        """In Execute: the child's result (a RUNNING snapshot if it lost an any_of)."""
        return context._subflow_result(index)

    @staticmethod
    def get_flow_id(context: Context, index: int = 0) -> str:
        """The generated child id ``SubFlow:{parent flow id}-{step execution id}-{index}``."""
        return context._subflow_flow_id(index)


def subflow_id(parent_flow_id: str, step_execution_id: str, index: int) -> str:
    """Build the child Flow id Dex generates for a SubFlow condition (R131)."""
    return f"SubFlow:{parent_flow_id}-{step_execution_id}-{index}"
