"""Property test of the critical section under random faults (R168, R169, R170, R172).

Hypothesis draws a seed and a fault plan for the contract-edit Flow: failed attempts (attempt 1
or 2, WaitFor or Execute) of any of its Steps, for every execution of the type or for one, and
cancellations of handoff executions (EnterContractEdit-N) right after their wait was satisfied
or after one of their attempts started. After every commit, the token is conserved: tokens
queued in ``contractEditToken`` + tokens reserved by an active handoff whose Execute has not
committed + branches holding the token inside the section (an active EditContract,
SaveContractEdit or ReleaseContractEditToken) == 1, and at most one branch is inside.

A handoff's commit consumes its reservation for good as it moves on to EditContract, so the
reservations alone cannot be the conserved quantity: the branch inside the section holds the
token until the Step that leaves it publishes the token back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from dexviz import Event, EventKind, FaultPlan, FlowStatus
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
from tests.engine.flows_b import FINISHED_CHANNEL, TOKEN_CHANNEL, TokenInvariant, started

REVIEWERS = 8
FLOW = ContractEditFlow()
STEP_TYPES = (
    "StartContractEdits",
    "EnterContractEdit",
    "EditContract",
    "SaveContractEdit",
    "ReleaseContractEditToken",
    "FinishContractEdits",
)
CANCEL_POINTS = ("WaitSatisfied", "AttemptStarted", "AttemptStarted:execute")


@dataclass(frozen=True)
class Failure:
    """Fail attempt ``attempt`` of ``method`` of ``step_type`` (of execution #number if set)."""

    step_type: str
    method: str
    attempt: int
    number: int | None

    def rule(self) -> Any:
        execution = f"{self.step_type}-{self.number}" if self.number else None
        return FaultPlan.fail(self.step_type, self.method, self.attempt, execution_id=execution)

    def __str__(self) -> str:
        target = f"{self.step_type}-{self.number}" if self.number else f"every {self.step_type}"
        return f"fail {target} {self.method} attempt {self.attempt}"


@dataclass(frozen=True)
class Cancel:
    """Cancel EnterContractEdit-``number`` after its first event of kind ``point``."""

    number: int
    point: str

    def rule(self) -> Any:
        kind, _, method = self.point.partition(":")

        def at(event: Event) -> bool:
            return str(event.kind) == kind and (not method or event.method == method)

        return FaultPlan.cancel(f"EnterContractEdit-{self.number}", at=at)

    def __str__(self) -> str:
        return f"cancel EnterContractEdit-{self.number} at {self.point}"


WITH_WAIT_FOR = ("EnterContractEdit", "FinishContractEdits")


@st.composite
def failures(draw: st.DrawFn) -> Failure:
    """A failed attempt of a method the Step has (only two Steps of the Flow have a WaitFor)."""
    step_type = draw(st.sampled_from(STEP_TYPES))
    methods = ("execute", "wait_for") if step_type in WITH_WAIT_FOR else ("execute",)
    numbers = REVIEWERS if step_type not in ("StartContractEdits", "FinishContractEdits") else 1
    return Failure(
        step_type,
        draw(st.sampled_from(methods)),
        draw(st.integers(1, 2)),
        draw(st.one_of(st.none(), st.integers(1, numbers))),
    )


cancels = st.builds(
    Cancel, number=st.integers(1, REVIEWERS), point=st.sampled_from(CANCEL_POINTS)
)


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**16),
    fails=st.lists(failures(), max_size=5),
    cancellations=st.lists(cancels, max_size=3, unique_by=lambda c: c.number),
)
def test_r172_r168_token_conservation_under_random_faults(
    seed: int, fails: list[Failure], cancellations: list[Cancel]
) -> None:
    plan = FaultPlan.of(*(f.rule() for f in fails), *(c.rule() for c in cancellations))
    note(f"seed={seed}; plan: " + ("; ".join(map(str, [*fails, *cancellations])) or "no faults"))
    engine = started(FLOW, sample_edits(REVIEWERS), seed=seed, faults=plan)
    invariant = TokenInvariant(engine)
    engine.run_until_idle(max_units=20_000)
    assert invariant.violations == [], "\n".join(invariant.violations[:5])
    assert invariant.max_holders <= 1

    state = engine.flow_state("flow-1")
    assert state.channels[TOKEN_CHANNEL] == ("contract",)
    canceled = {
        e.execution_id
        for e in engine.history("flow-1")
        if e.kind == EventKind.EXECUTION_CANCELED and e.payload["by"] == "fault"
    }
    # Every branch whose handoff was not canceled reports once; a canceled one never does.
    if canceled:
        assert engine.result("flow-1").status is FlowStatus.RUNNING
        assert len(state.channels[FINISHED_CHANNEL]) == REVIEWERS - len(canceled)
    else:
        assert engine.result("flow-1").status is FlowStatus.COMPLETED
        (completion,) = engine.result("flow-1").completions
        assert len(completion.value) == REVIEWERS  # type: ignore[arg-type]
