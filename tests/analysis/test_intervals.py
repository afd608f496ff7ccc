"""Timeline segments, lane grouping and the overlap sweep."""

from __future__ import annotations

import pytest

from dexviz.analysis.executions import build_executions
from dexviz.analysis.intervals import (
    SegmentKind,
    branch_roots,
    execution_segments,
    lane_groups,
    overlapping_pairs,
    run_segments,
)
from tests.analysis.factory import canceled_holder_history, contract_edit_history

S = 10**9


@pytest.fixture(scope="module")
def run():
    return build_executions(contract_edit_history())


def _spans(run, execution_id):
    return [(str(s.kind), s.outcome, (s.start_ns - run.start_ns) / S, (s.end_ns - run.start_ns) / S)
            for s in execution_segments(run[execution_id], run.end_ns)]


def test_failed_attempts_and_backoff_are_separate_segments(run):
    assert _spans(run, "SaveContractEdit-3") == [
        ("execute", "failed", 11.0, 13.0),
        ("backoff", "failed", 13.0, 14.0),
        ("execute", "failed", 14.0, 16.0),
    ]


def test_a_waiting_handoff_has_wait_for_condition_wait_and_execute(run):
    assert _spans(run, "EnterContractEdit-4") == [
        ("wait_for", "completed", 0.0, 0.0),
        ("waiting", None, 0.0, 9.0),
        ("execute", "completed", 9.0, 9.0),
    ]


def test_a_canceled_execution_ends_its_attempt_at_the_cancellation():
    run = build_executions(canceled_holder_history())
    kinds = [(str(s.kind), s.outcome, (s.end_ns - run.start_ns) / S)
             for s in execution_segments(run["EnterContractEdit-1"], run.end_ns)]
    assert kinds[-1] == ("execute", "canceled", 1.0)


def test_run_segments_cover_every_execution(run):
    segments = run_segments(run)
    assert {s.execution_id for s in segments} == set(run)
    assert all(s.end_ns >= s.start_ns for s in segments)
    assert sum(1 for s in segments if s.kind is SegmentKind.BACKOFF) == 2


def test_branches_follow_only_children_up_to_the_fan_out(run):
    roots = branch_roots(run)
    assert roots["SaveContractEdit-3"] == "EnterContractEdit-4"
    assert roots["ReleaseContractEditToken-1"] == "EnterContractEdit-2"
    assert roots["FinishContractEdits-1"] == "FinishContractEdits-1"
    groups = dict(lane_groups(run, "branch"))
    assert groups["EnterContractEdit-4"] == [
        "EnterContractEdit-4", "EditContract-3", "SaveContractEdit-3",
        "ReleaseContractEditToken-2"]


def test_lane_groups_by_step_type_keep_first_appearance_order(run):
    assert [name for name, _ in lane_groups(run)] == [
        "StartContractEdits", "EnterContractEdit", "FinishContractEdits", "EditContract",
        "SaveContractEdit", "ReleaseContractEditToken"]
    with pytest.raises(ValueError, match="unknown group_by: 'lane'"):
        lane_groups(run, "lane")


def test_overlapping_pairs_treats_intervals_as_half_open():
    intervals = [((0, 1), (4, 5)), ((4, 6), (8, 0)), ((3, 0), (5, 0)), ((7, 0), (7, 0))]
    assert overlapping_pairs(intervals) == [(0, 2), (1, 2)]
