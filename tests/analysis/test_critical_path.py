"""critical_path(): the chain of executions from the start to the close."""

from __future__ import annotations

from dexviz.analysis.critical_path import critical_path
from tests.analysis.factory import contract_edit_history, overlapping_token_history
from tests.analysis.runs import contract_edit_run


def test_the_token_chain_is_the_critical_path_of_the_contract_edit():
    path = critical_path(contract_edit_history())
    assert path.duration_s == 28.0 and path.close_status == "COMPLETED"
    ids = path.execution_ids
    assert ids[0] == "StartContractEdits-1" and ids[-1] == "FinishContractEdits-1"
    # Every reviewer's handoff is on it, in the order the token travelled.
    assert [i for i in ids if i.startswith("EnterContractEdit")] == [
        f"EnterContractEdit-{n}" for n in range(1, 9)]
    vias = {link.execution_id: link.via for link in path.links}
    assert vias["EnterContractEdit-2"] == "message" and vias["EditContract-1"] == "lineage"
    assert path.links[-1].channel == "contractEditFinished"


def test_links_are_contiguous_in_time():
    path = critical_path(contract_edit_history())
    for previous, link in zip(path.links, path.links[1:], strict=False):
        assert link.released_ns >= previous.released_ns
        assert link.released_ns <= previous.end_ns or link.via == "lineage"
    assert path.links[-1].end_ns == path.end_ns


def test_only_the_last_section_leads_to_the_close_when_two_run_side_by_side():
    path = critical_path(overlapping_token_history())
    assert path.execution_ids[-4:] == (
        "EnterContractEdit-3", "EditContract-3", "SaveContractEdit-3", "FinishContractEdits-1")
    assert "Critical path:" in str(path)


def test_simulated_run_path_visits_all_eight_handoffs():
    path = critical_path(contract_edit_run(5))
    handoffs = [i for i in path.execution_ids if i.startswith("EnterContractEdit")]
    assert sorted(handoffs) == [f"EnterContractEdit-{n}" for n in range(1, 9)]
    assert path.duration_s == 28.0
