"""On Flows whose every schedule ends, the liveness search agrees with the schedule search.

Such a Flow has no infinite run, so ``eventually_closes()`` holds exactly when every schedule
that runs out of work has closed — what ``explore(..., check=eventually_closes())`` checks
schedule by schedule. A liveness search that found a cycle there would have merged states
with different futures; one that missed a stall would have lost a state.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings

from dexviz.explore import checks, explore
from dexviz.explore.liveness import explore_liveness
from tests.explore.flows import CASES, Case
from tests.explore.test_soundness import generated

# The broken variant lets two coroutine handlers run at once: their states cannot be keyed,
# so its graph (4,600 states) is too slow for a unit test.
FIXED = [c for c in CASES if c.name != "broken-contract-2"]
BOUND = 3_000


def _compare(case: Case, bounded: bool = False) -> None:
    """Compare the two searches; a ``bounded`` (generated) draw that hits a bound is skipped."""
    require = assume if bounded else _true
    schedules = explore(case.flow, case.input, check=checks.eventually_closes(),
                        actions=case.actions, faults=case.faults, progress=False,
                        max_schedules=BOUND)  # fmt: skip
    require(schedules.exhaustive and not schedules.depth_bounded)
    live = explore_liveness(case.flow, case.input, actions=case.actions, faults=case.faults,
                            max_states=BOUND)  # fmt: skip
    require(live.exhaustive)
    assert live.liveness is not None and live.liveness.cycles == 0
    assert live.proven == schedules.proven
    assert [v.message for v in live.violations] == [v.message for v in schedules.violations]
    assert all(v.lasso is None for v in live.violations)


def _true(condition: bool) -> None:
    assert condition


@pytest.mark.parametrize("case", FIXED, ids=lambda c: c.name)
def test_liveness_agrees_with_the_schedule_search_on_flows_that_always_end(case: Case) -> None:
    _compare(case)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated)
def test_liveness_agrees_with_the_schedule_search_on_generated_flows(case: Case) -> None:
    _compare(case, bounded=True)
