"""Typed names are checked against the Flow or the history, with a "did you mean" hint."""

from __future__ import annotations

import pytest

from dexviz.analysis.exclusive import holdings
from dexviz.analysis.names import check_event_kind, check_name, did_you_mean, step_types
from tests.analysis.runs import contract_edit_run


def test_did_you_mean_names_the_closest_known_name():
    assert did_you_mean("SaveContractEdt", ["SaveContractEdit", "EditContract"]) == (
        " (did you mean 'SaveContractEdit'?)")
    assert did_you_mean("flowclosed", ["FlowClosed"]) == " (did you mean 'FlowClosed'?)"
    assert did_you_mean("zzz", ["SaveContractEdit"]) == ""


def test_check_name_lists_what_exists():
    check_name("a", ["a", "b"], "Step type", "Flow 'F'")
    with pytest.raises(ValueError, match=r"Flow 'F' has no Step type 'c'; its Step types: a, b"):
        check_name("c", ["b", "a"], "Step type", "Flow 'F'")


def test_event_kinds_are_checked():
    check_event_kind("MessageConsumed")
    with pytest.raises(ValueError, match="did you mean 'MessageConsumed'"):
        check_event_kind("MessageConsumd")


def test_step_types_come_from_the_spec_and_the_events():
    assert "SaveContractEdit" in step_types(contract_edit_run(0, 2))


def test_a_channel_typo_suggests_the_declared_channel():
    with pytest.raises(ValueError, match="did you mean 'contractEditToken'"):
        holdings(contract_edit_run(0, 2), "contractEditTokn")
