"""exclusive_sections: one interval per holding of a token Channel, and every overlap."""

from __future__ import annotations

from itertools import pairwise

import pytest

from dexviz.analysis.exclusive import (
    ExclusiveReport,
    Holding,
    Overlap,
    exclusive_sections,
    holdings,
)
from tests.analysis.factory import (
    TOKEN,
    canceled_holder_history,
    contract_edit_history,
    overlapping_token_history,
)
from tests.analysis.runs import contract_edit_run


def test_hand_made_contract_edit_is_ok_with_one_interval_per_reviewer():
    report = exclusive_sections(contract_edit_history(), TOKEN)
    assert report.ok and not report.overlaps and not report.unreleased
    assert [h.holder for h in report.intervals] == [f"EnterContractEdit-{n}" for n in range(1, 9)]
    assert [h.end for h in report.intervals] == ["published"] * 8


def test_a_holding_spans_the_chain_from_consume_to_the_releasing_commit():
    report = exclusive_sections(contract_edit_history(), TOKEN)
    first, second, *_ = report.intervals
    assert first.chain == ("EnterContractEdit-1", "EditContract-1", "SaveContractEdit-1")
    assert first.released_by == "SaveContractEdit-1"
    assert (first.end_ns - report.start_ns, first.duration_ns) == (4 * 10**9, 4 * 10**9)
    # Reviewer 2's handoff fails twice; its recovery Step releases the token.
    assert second.chain == ("EnterContractEdit-2", "ReleaseContractEditToken-1")
    assert second.released_by == "ReleaseContractEditToken-1"
    # A handover at one instant (release, then the next consume) is not an overlap.
    assert second.start_ns == first.end_ns and second.start_seq > first.end_seq


def test_two_holders_at_once_are_reported_with_both_execution_ids():
    report = exclusive_sections(overlapping_token_history(), TOKEN)
    assert not report.ok
    assert len(report.intervals) == 3
    (overlap,) = report.overlaps
    assert overlap.execution_ids == ("EnterContractEdit-1", "EnterContractEdit-2")
    assert (overlap.end_ns - overlap.start_ns) == 4 * 10**9
    assert "OVERLAP EnterContractEdit-1 and EnterContractEdit-2" in str(report)
    assert repr(report) == (
        "ExclusiveReport(channel='contractEditToken', ok=False, holdings=3, overlaps=1)"
    )


def test_a_canceled_holder_ends_its_holding_when_the_token_returns():
    report = exclusive_sections(canceled_holder_history(), TOKEN)
    canceled, taker = report.intervals
    assert (canceled.holder, canceled.end, canceled.released_by) == (
        "EnterContractEdit-1", "returned", None)
    assert taker.start_seq > canceled.end_seq and report.ok


def test_a_token_never_published_back_is_unreleased_until_the_close():
    history = contract_edit_history(count=3)
    # Drop the last release: reviewer 3's SaveContractEdit-2 never publishes the token.
    events = [e for e in history if not (
        str(e.kind) == "MessagePublished" and e.payload.get("publisher") == "SaveContractEdit-2"
        and e.payload.get("channel") == TOKEN)]
    report = exclusive_sections(type(history)(events), TOKEN)
    (lost,) = report.unreleased
    assert lost.holder == "EnterContractEdit-3" and lost.end == "closed"
    assert lost.end_ns == events[-1].time_ns
    assert "UNRELEASED EnterContractEdit-3" in str(report)


def test_an_undeclared_channel_is_a_clear_error():
    with pytest.raises(ValueError, match="no Channel 'tokn' \\(its Channels: "
                                         "contractEditFinished, contractEditToken\\)"):
        holdings(contract_edit_history(), "tokn")


@pytest.mark.parametrize("seed", range(100))
def test_r168_simulated_contract_edit_never_overlaps(seed):
    report = exclusive_sections(contract_edit_run(seed), TOKEN)
    assert report.ok, str(report)
    assert len(report.intervals) == 8 and not report.unreleased
    holders = sorted(h.holder for h in report.intervals)
    assert holders == [f"EnterContractEdit-{n}" for n in range(1, 9)]


def _holding(n: int, end: str = "published") -> Holding:
    start = n * 10**9
    holder = f"EnterContractEdit-{n}"
    return Holding(TOKEN, holder, "EnterContractEdit", (holder,), (f"m-{n}",), start, 2 * n,
                   start + 2 * 10**9, 2 * n + 1, None, end)


def _report(count: int, end: str = "published") -> ExclusiveReport:
    intervals = tuple(_holding(n, end) for n in range(1, count + 1))
    overlaps = tuple(Overlap(a, b, b.start_ns, a.end_ns) for a, b in pairwise(intervals))
    return ExclusiveReport(TOKEN, "flow-1", "run-1", 0, intervals, overlaps)


def test_describe_with_max_rows_cuts_every_section_and_says_how_many_rows_are_left_out():
    report = _report(25, end="closed")
    lines = report.describe(max_rows=3).splitlines()
    assert lines[0].endswith("25 holdings, FAILED, 24 overlapping pairs")
    assert [line.split()[0] for line in lines[2:5]] == [
        "EnterContractEdit-1", "EnterContractEdit-2", "EnterContractEdit-3"]
    assert lines[5] == "  ... and 22 more holdings not shown"
    assert lines[6].startswith("  OVERLAP EnterContractEdit-1 and EnterContractEdit-2")
    assert lines[9] == "  ... and 21 more overlapping pairs not shown"
    assert lines[10] == f"  UNRELEASED EnterContractEdit-1: never published {TOKEN!r} back"
    assert lines[13:] == ["  ... and 22 more unreleased holdings not shown"]


def test_describe_without_max_rows_is_the_full_table():
    report = _report(25)
    assert report.describe() == str(report) == report.describe(max_rows=None)
    assert len(str(report).splitlines()) == 2 + 25 + 24
    assert "not shown" not in str(report)


@pytest.mark.parametrize(("count", "max_rows", "cut"), [(3, 3, False), (4, 3, True), (1, 0, True)])
def test_describe_adds_a_note_only_when_rows_are_left_out(count, max_rows, cut):
    text = exclusive_sections(contract_edit_history(count=count), TOKEN).describe(max_rows)
    assert ("1 more holding not shown" in text) is cut
    assert text.count("EnterContractEdit-") == min(count, max_rows)


def test_describe_rejects_a_negative_max_rows():
    with pytest.raises(ValueError, match="max_rows must be None or at least 0, not -1"):
        _report(2).describe(max_rows=-1)
