"""The CLI's output scales: counts, at most DETAIL_LINES rows per table, a note of the rest."""

from __future__ import annotations

import pytest

from dexviz import cli
from dexviz.cli.common import DETAIL_LINES
from tests.analysis.factory import TOKEN, contract_edit_history
from tests.cli.fakes import Record, fake_demo


def _records(count: int, *, overlapping: bool = False) -> list[Record]:
    outcomes = ("saved", "saved", "failed", "withdrawn")
    step = 1000 if overlapping else 5000
    return [
        Record(f"reviewer-{n}", "saved" if overlapping else outcomes[n % 4], n * step,
               n * step + 4000)
        for n in range(count)
    ]


def test_summarize_records_counts_outcomes_then_shows_at_most_the_limit():
    lines = cli.summarize_records(_records(900), 10)
    assert lines[0] == "  900 records: 450 saved, 225 failed, 225 withdrawn"
    assert len(lines) == 1 + 10 + 1
    assert lines[1].startswith("  reviewer-0  ") and lines[10].startswith("  reviewer-9  ")
    assert lines[-1] == "  ... and 890 more records not shown"


@pytest.mark.parametrize(("count", "cut"), [(10, False), (11, True)])
def test_summarize_records_notes_left_out_records_only_when_there_are_some(count, cut):
    lines = cli.summarize_records(_records(count), 10)
    assert sum(line.startswith("  reviewer-") for line in lines) == 10
    assert (lines[-1] == "  ... and 1 more records not shown") is cut
    assert len(lines) == 1 + 10 + cut


def test_summarize_records_of_no_records_prints_nothing():
    assert cli.summarize_records([], 10) == []


def test_unknown_outcomes_are_counted_after_the_known_ones():
    records = [Record("a", "lost", 0, 1), Record("b", "saved", 0, 1), Record("c", "aborted", 0, 1)]
    assert cli.summarize_records(records, 10)[0] == "  3 records: 1 saved, 1 aborted, 1 lost"


def test_format_records_with_a_limit_keeps_times_relative_to_the_first_start_of_all():
    records = [Record("r-long-name", "saved", 9000, 9500), Record("r-1", "saved", 1000, 2000)]
    assert cli.format_records(records, limit=1) == [
        "  r-long-name  saved        8.000 s ..   8.500 s"
    ]
    assert cli.format_records(records, limit=0) == []


def test_a_900_reviewer_demo_prints_a_bounded_summary(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(cli, "_simulate_contract_edits", lambda **_: fake_demo(_records(900)))
    assert cli.main(["demo", "--out", str(tmp_path), "--reviewers", "900"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "ContractEditFlow with 900 reviewers, seed 0: COMPLETED"
    assert out[1] == "  900 records: 450 saved, 225 failed, 225 withdrawn"
    assert sum(line.startswith("  reviewer-") for line in out) == DETAIL_LINES
    assert "  ... and 890 more records not shown" in out
    assert "critical section held: no two of the 450 saved edits overlap" in out
    assert out[-1] == f"wrote {tmp_path / 'history.jsonl'}"
    assert len(out) <= DETAIL_LINES + 6


def test_many_overlaps_are_reported_with_a_bounded_number_of_lines(monkeypatch, tmp_path, capsys):
    records = _records(100, overlapping=True)
    monkeypatch.setattr(cli, "_simulate_contract_edits", lambda **_: fake_demo(records))
    assert cli.main(["demo", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err.splitlines()
    pairs = len(cli.find_overlaps(records))
    assert pairs > DETAIL_LINES
    assert len(err) == DETAIL_LINES + 1
    assert err[0] == (
        "dexviz demo: saved edits overlap: reviewer-0 [0, 4000] and reviewer-1 [1000, 5000]"
    )
    assert err[-1] == (
        f"dexviz demo: ... and {pairs - DETAIL_LINES} more overlapping pairs ({pairs} in all)"
    )
    assert (tmp_path / "history.jsonl").read_text() == '{"seq": 1}\n'


@pytest.mark.slow
def test_the_real_900_reviewer_demo_prints_a_short_summary(tmp_path):
    from tests.test_cli import run_module

    completed = run_module("demo", "--out", str(tmp_path), "--reviewers", "900")
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert len(lines) <= 2 * DETAIL_LINES + 20, completed.stdout
    assert "  ... and 890 more records not shown" in lines
    assert "  ... and 890 more holdings not shown" in lines
    assert any("900 holdings, OK, no two holdings overlap" in line for line in lines)
    assert sum(line.startswith("wrote ") for line in lines) == 6
    # The file written beside it keeps the full table.
    assert len((tmp_path / "exclusive-sections.txt").read_text().splitlines()) == 2 + 900


def test_history_with_a_channel_prints_at_most_detail_lines_holdings(tmp_path, capsys):
    path = contract_edit_history(count=DETAIL_LINES + 5).save(tmp_path / "history.jsonl")
    assert cli.main(["history", str(path), "--channel", TOKEN]) == 0
    out = capsys.readouterr().out
    assert f"{DETAIL_LINES + 5} holdings, OK" in out
    assert out.count("  EnterContractEdit-") == DETAIL_LINES
    assert out.splitlines()[-1] == "  ... and 5 more holdings not shown"
