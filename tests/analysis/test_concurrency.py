"""concurrency(): executions running or alive over time, and the maximum."""

from __future__ import annotations

import pytest

from dexviz.analysis.concurrency import concurrency
from tests.analysis.factory import contract_edit_history, overlapping_token_history
from tests.analysis.runs import contract_edit_run


def test_the_token_serialises_running_work_in_the_hand_made_run():
    profile = concurrency(contract_edit_history())
    assert profile.maximum == 1
    assert profile.series()[:4] == ((0.0, 1), (2.0, 1), (4.0, 0), (5.0, 1))
    # The 28 s run is busy except the two 1 s backoffs.
    assert profile.time_at_least(1) == pytest.approx(26.0)


def test_two_tokens_let_two_edits_run_side_by_side():
    profile = concurrency(overlapping_token_history())
    assert profile.maximum == 2
    # First reached while EditContract-1 edits and the second handoff starts its Execute.
    assert profile.maximum_ids == ("EditContract-1", "EnterContractEdit-2")
    assert profile.time_at_least(2) == pytest.approx(4.0)


def test_active_counts_waiting_executions_too():
    profile = concurrency(contract_edit_history(), mode="active")
    assert profile.maximum == 9  # eight handoffs waiting for the token, plus the join
    assert profile.points[-1][1] == 0
    assert "maximum=9" in repr(profile)


def test_in_a_simulated_run_at_most_one_edit_runs_at_a_time():
    history = contract_edit_run(0)
    profile = concurrency(history)
    # Beyond t=0 (where WaitFors run beside the first edit) only one handler runs at a time.
    assert all(count <= 1 for t, count in profile.series() if t > 0)


def test_an_unknown_mode_is_rejected():
    with pytest.raises(ValueError, match="unknown concurrency mode: 'busy'"):
        concurrency(contract_edit_history(), mode="busy")  # type: ignore[arg-type]
