"""Measured sections: a holder is inside until its token is back and its last Step finished."""

from __future__ import annotations

import pytest

from dexviz.analysis.exclusive import exclusive_sections
from dexviz.analysis.sections import measured_sections
from tests.analysis.factory import (
    SECOND,
    TOKEN,
    contract_edit_history,
    early_release_history,
    overlapping_token_history,
)
from tests.analysis.runs import broken_counterexample, contract_edit_run


def _seconds(history, time_ns):
    return (time_ns - history[0].time_ns) / SECOND


def test_a_section_lasts_until_its_chains_last_step_finished_not_only_until_the_release():
    history = early_release_history()
    first, second = measured_sections(history, TOKEN).sections
    assert first.chain == ("EnterContractEdit-1", "EditContract-1", "SaveContractEdit-1")
    assert _seconds(history, first.holding.end_ns) == 2.0  # the token went back at t=2 ...
    assert _seconds(history, first.end_ns) == 4.0  # ... but SaveContractEdit-1 ran until t=4
    assert first.last_step == "SaveContractEdit-1" and not first.inside
    assert second.holder == "EnterContractEdit-2" and second.last_step is None


def test_an_early_release_overlaps_sections_though_the_holdings_do_not():
    history = early_release_history()
    assert exclusive_sections(history, TOKEN).ok
    report = measured_sections(history, TOKEN)
    (overlap,) = report.overlaps
    assert report.holders == ("EnterContractEdit-1", "EnterContractEdit-2")
    assert (_seconds(history, overlap.start_ns), _seconds(history, overlap.end_ns)) == (2.0, 4.0)


@pytest.mark.parametrize("history", [contract_edit_history(), overlapping_token_history()])
def test_a_section_released_by_its_last_step_is_its_holding(history):
    report = measured_sections(history, TOKEN)
    holdings = exclusive_sections(history, TOKEN)
    assert [(s.start_ns, s.end_ns) for s in report.sections] == [
        (h.start_ns, h.end_ns) for h in holdings.intervals]
    assert len(report.overlaps) == len(holdings.overlaps)


def test_a_counterexample_stopped_at_the_violating_commit_leaves_both_holders_inside():
    run = broken_counterexample()
    sections = measured_sections(run.history, TOKEN)
    assert exclusive_sections(run.history, TOKEN).ok  # the holdings alone look fine
    assert all(s.inside for s in sections.sections)
    assert sections.holders == ("EnterContractEdit-1", "EnterContractEdit-2")


def test_an_unknown_channel_is_an_error_naming_the_flow():
    with pytest.raises(ValueError, match="has no Channel 'contractEditTokn'.*did you mean"):
        measured_sections(contract_edit_history(), "contractEditTokn")


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_the_proven_contract_edit_flow_never_has_two_holders_inside_at_once(seed):
    # explore() proves exclusive(contractEditToken) for ContractEditFlow: no run may disagree.
    report = measured_sections(contract_edit_run(seed), TOKEN)
    assert len(report.sections) == 8 and not report.overlaps


def test_only_a_section_that_goes_on_past_its_release_outlasts_its_holding():
    early = measured_sections(early_release_history(), TOKEN).sections
    assert [s.outlasts_holding for s in early] == [True, False]
    assert not any(s.outlasts_holding for s in measured_sections(contract_edit_history(),
                                                                 TOKEN).sections)
