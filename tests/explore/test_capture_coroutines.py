"""The explorer captures states with coroutine handlers in flight and resumes from them.

``run_schedule(..., capture=depth)`` snapshots the state after that step; the seed Flow's edits
``await`` a sleep, so most of its states have a coroutine in flight. Each must be captured
(not left to a replay of choices), and a schedule resumed from it must end in the same
terminal state with the same steps as the schedule run from the start.
"""

from __future__ import annotations

from typing import Any

from dexviz.engine.engine import as_registry
from dexviz.examples.contract_edit import ContractEdit, ContractEditFlow
from dexviz.explore import checks
from dexviz.explore.schedule import run_schedule
from dexviz.explore.schedule_records import Setup

EDITS = [ContractEdit("r1"), ContractEdit("r2", should_fail_edit=True), ContractEdit("r3")]


class _First:
    """Takes the first option of every choice."""

    def choose(self, kind: str, options: tuple[Any, ...]) -> int | None:
        del kind, options
        return 0

    def stepped(self, step: Any) -> None:
        del step


def _setup() -> Setup:
    flow = ContractEditFlow()
    check = (checks.exclusive("contractEditToken"),)
    return Setup(as_registry(flow), flow, EDITS, "flow-1", check, (), None, 200, False)


def test_every_state_of_a_schedule_with_edits_in_flight_is_captured_and_resumes_alike() -> None:
    whole = run_schedule(_setup(), _First())
    labels = [step.label for step in whole.steps]
    assert whole.outcome == "terminal" and len(labels) > 10
    in_flight = 0
    for depth in range(len(labels) - 1):
        point = run_schedule(_setup(), _First(), capture=depth).captured
        assert point is not None, f"step {depth} was not captured"
        in_flight += bool(point.snapshot._state.coroutines)  # type: ignore[union-attr]
        resumed = run_schedule(_setup(), _First(), resume=point)
        assert [step.label for step in resumed.steps] == labels[depth + 1 :]
        assert resumed.final == whole.final
    assert in_flight > len(labels) // 3, "most of the seed Flow's states have an edit in flight"
