"""The run diff: lineage alignment, the first divergence, and every difference by execution."""

from __future__ import annotations

import pytest

import dexviz
from dexviz.analysis.run_diff import Aspect, compare_runs
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
from tests.compare.variants import CHANGES, load_variant, record, shift_execution_numbers


@pytest.fixture(scope="module")
def seed_runs() -> tuple[dexviz.History, dexviz.History]:
    flow = ContractEditFlow()
    return (dexviz.simulate(flow, sample_edits(8), seed=1).history,
            dexviz.simulate(flow, sample_edits(8), seed=2).history)


def test_identical_runs_have_no_difference(seed_runs):
    history, _ = seed_runs
    comparison = compare_runs(history, history)
    assert comparison.first is None
    assert comparison.differences == ()
    assert not comparison
    assert comparison.event_map == tuple(range(len(history)))


def test_runs_differing_only_in_execution_numbering_align_with_no_difference(seed_runs):
    history, _ = seed_runs
    shifted = shift_execution_numbers(history, offset=10)
    assert shifted[1].execution_id == "StartContractEdits-11"
    comparison = compare_runs(history, shifted)
    assert not comparison, comparison.summary()
    assert comparison.aligned["EnterContractEdit-3"] == "EnterContractEdit-13"
    assert comparison.event_map == tuple(range(len(history)))


def test_two_seeds_align_each_reviewer_with_itself(seed_runs):
    a, b = seed_runs
    comparison = compare_runs(a, b)
    assert comparison
    executions_a = dexviz.analysis.executions.build_executions(a)
    executions_b = dexviz.analysis.executions.build_executions(b)
    for left, right in comparison.aligned.items():
        assert executions_a[left].step_type == executions_b[right].step_type
    assert len(comparison.aligned) == len(executions_a) == len(executions_b)
    enter = [(left, right) for left, right in comparison.aligned.items() if "Enter" in left]
    assert all(executions_a[left].input == executions_b[right].input for left, right in enter)
    first = comparison.first
    assert first is not None and first.aspect is Aspect.CONSUMED
    assert first.method == "wait_for"
    assert first.seq_a == min(d.order for d in comparison.differences)[0]


def test_differences_are_grouped_by_execution_in_order_of_their_first(seed_runs):
    comparison = compare_runs(*seed_runs)
    seen: list[tuple[str | None, str | None]] = []
    for difference in comparison.differences:
        key = (difference.execution_a, difference.execution_b)
        if not seen or seen[-1] != key:
            assert key not in seen, f"{key} comes in two groups"
            seen.append(key)
    firsts = [group[0].order for group in comparison.by_execution().values()]
    assert firsts == sorted(firsts)


def test_tolerance_hides_small_timing_differences_and_none_hides_all(seed_runs):
    a, b = seed_runs
    timed = compare_runs(a, b, tolerance_s=0.0)
    assert any(d.aspect is Aspect.TIMING for d in timed.differences)
    untimed = compare_runs(a, b, tolerance_s=None)
    assert not any(d.aspect is Aspect.TIMING for d in untimed.differences)
    huge = compare_runs(a, b, tolerance_s=1e6)
    assert not any(d.aspect is Aspect.TIMING for d in huge.differences)


def test_one_decision_deep_inside_is_the_first_divergence(tmp_path):
    original = load_variant(tmp_path, ())
    recorded = record(original, 8, seed=0).history
    changed = load_variant(tmp_path, CHANGES["changed decision"])
    replayed = record(changed, 8, seed=0).history
    comparison = compare_runs(recorded, replayed)
    first = comparison.first
    assert first is not None
    assert (first.aspect, first.method, first.step_type) == (Aspect.DECISION, "execute",
                                                             "EditContract")
    assert first.a["kind"] == "NEXT" and first.b["kind"] == "DEAD_END"
    reviewer = dexviz.analysis.executions.build_executions(recorded)[first.execution_a].input
    assert reviewer["reviewer"] == "reviewer-3"
    assert first.seq_a is not None and first.seq_a > 40
    # Everything the history recorded before the divergence is aligned, event for event.
    assert all(comparison.event_map[i] == i for i in range(first.seq_a - 1))


def test_runs_of_different_lengths_report_the_executions_only_one_side_has():
    flow = ContractEditFlow()
    short = dexviz.simulate(flow, sample_edits(8), seed=0).history
    longer = dexviz.simulate(flow, sample_edits(9), seed=0).history
    comparison = compare_runs(short, longer, tolerance_s=None)
    only_b = [d for d in comparison.differences if d.aspect is Aspect.STEP]
    assert only_b and all(d.execution_a is None and d.execution_b for d in only_b)
    assert {d.step_type for d in only_b} >= {"EnterContractEdit", "EditContract",
                                             "SaveContractEdit"}
    assert comparison.first is not None and comparison.first.aspect is Aspect.INPUT


def test_a_run_cut_short_differs_in_its_close_and_missing_executions(seed_runs):
    history, _ = seed_runs
    cut = history[:60]
    comparison = compare_runs(history, cut, tolerance_s=None)
    aspects = {d.aspect for d in comparison.differences}
    assert Aspect.CLOSE in aspects and Aspect.STEP in aspects
    assert comparison.aligned_event(len(history) - 1) is not None


def test_aligned_event_follows_the_cursor_to_the_aligned_execution(seed_runs):
    a, b = seed_runs
    comparison = compare_runs(a, b)
    for index, event in enumerate(a):
        mapped = comparison.event_map[index]
        if mapped is None or event.execution_id is None:
            continue
        other = b[mapped]
        assert other.execution_id == comparison.aligned[event.execution_id]
        assert (other.kind, other.method, other.attempt) == (event.kind, event.method,
                                                             event.attempt)
    with pytest.raises(IndexError, match="no index"):
        comparison.aligned_event(len(a))


def test_bad_arguments_are_named():
    history = dexviz.simulate(ContractEditFlow(), sample_edits(2), seed=0).history
    with pytest.raises(ValueError, match="unknown aspect 'colour'"):
        compare_runs(history, history, aspects=["colour"])
    with pytest.raises(ValueError, match="tolerance_s must be >= 0"):
        compare_runs(history, history, tolerance_s=-1)
    with pytest.raises(ValueError, match="the history is empty"):
        compare_runs(history, dexviz.History())


def test_an_extra_retry_leaves_every_execution_aligned():
    flow = ContractEditFlow()
    plain = dexviz.simulate(flow, sample_edits(3), seed=0).history
    plan = dexviz.FaultPlan.of(dexviz.FaultPlan.fail("StartContractEdits", "execute", 1))
    retried = dexviz.simulate(flow, sample_edits(3), seed=0, faults=plan).history
    comparison = compare_runs(plain, retried, tolerance_s=None)
    assert not any(d.aspect is Aspect.STEP for d in comparison.differences)
    assert len(comparison.aligned) == len(dexviz.analysis.executions.build_executions(plain))
    first = comparison.first
    assert first is not None
    assert (first.aspect, first.execution_a, first.method) == (
        Aspect.FAILURE, "StartContractEdits-1", "execute")
    assert first.a == [] and first.b[0][:2] == ("execute", 1)
