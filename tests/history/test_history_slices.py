"""Saved slices of a history: ``history[10:]`` loads with its seq kept; damage is still caught.

The header of a slice names its first ``seq`` (``first_seq``). A whole history's header does not
(its file is unchanged), so a whole history that lost its first lines is still rejected, as is a
slice that lost a line anywhere, or whose ``first_seq``, event count or digest was changed.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from dexviz import simulate
from dexviz.analysis.exclusive import exclusive_sections
from dexviz.analysis.executions import build_executions
from dexviz.analysis.state import state_at
from dexviz.cli import main as cli_main
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
from dexviz.history import Event, History, HistoryFormatError
from dexviz.viz.execution_view import execution_graph

WHOLE = simulate(ContractEditFlow(), sample_edits(3), seed=0).history
TOKEN = "contractEditToken"


def _lines(history: History) -> list[str]:
    return history.to_jsonl().splitlines()


def _header(text: str) -> dict[str, Any]:
    return json.loads(text.splitlines()[0])  # type: ignore[no-any-return]


def _resealed(lines: list[str], **header_changes: Any) -> str:
    """The lines with the header's count and digest recomputed (and ``header_changes`` applied)."""
    header = json.loads(lines[0])
    body = "".join(line + "\n" for line in lines[1:])
    header.update(events=len(lines) - 1, sha256=hashlib.sha256(body.encode()).hexdigest())
    header.update(header_changes)
    return json.dumps(header, sort_keys=True, separators=(",", ":")) + "\n" + body


def _load_error(tmp_path: Path, text: str) -> str:
    path = tmp_path / "slice.jsonl"
    path.write_text(text, encoding="utf-8", newline="\n")
    with pytest.raises(HistoryFormatError) as caught:
        History.load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: line "), message
    return message


# -- a slice saved on purpose loads ---------------------------------------------------------------


@pytest.mark.parametrize("part", [slice(10, None), slice(5, 20), slice(-1, None), slice(0, 1)])
def test_a_saved_slice_loads_with_its_seq_numbers_kept(tmp_path: Path, part: slice) -> None:
    piece = WHOLE[part]
    loaded = History.load(piece.save(tmp_path / "slice.jsonl"))
    assert loaded == piece
    assert [event.seq for event in loaded] == [event.seq for event in WHOLE.events[part]]
    assert loaded.to_jsonl() == piece.to_jsonl()


def test_the_header_of_a_slice_names_its_first_seq() -> None:
    assert _header(WHOLE[10:].to_jsonl())["first_seq"] == 11
    assert _header(WHOLE[10:].to_jsonl())["events"] == len(WHOLE) - 10


@pytest.mark.parametrize(
    "history", [WHOLE, WHOLE[:20], History()], ids=["whole", "prefix", "empty"]
)
def test_a_history_starting_at_seq_1_is_written_as_before(history: History) -> None:
    assert set(_header(history.to_jsonl())) == {"events", "flow_id", "format", "sha256", "version"}
    assert History.from_jsonl(history.to_jsonl()) == history


def test_an_empty_slice_loads_as_an_empty_history() -> None:
    assert History.from_jsonl(WHOLE[len(WHOLE) + 5 :].to_jsonl()) == History()


def test_a_hand_written_slice_with_first_seq_but_no_count_or_digest_loads() -> None:
    header = _header(WHOLE[10:].to_jsonl())
    del header["events"], header["sha256"]
    text = json.dumps(header) + "\n" + "\n".join(_lines(WHOLE[10:])[1:]) + "\n"
    assert History.from_jsonl(text) == WHOLE[10:]


# -- damage is still rejected, naming the file, the line and the reason --------------------------


def test_a_slice_missing_a_line_in_the_middle_is_rejected(tmp_path: Path) -> None:
    lines = _lines(WHOLE[10:])
    del lines[5]  # the event with seq 15
    message = _load_error(tmp_path, _resealed(lines))
    assert message.endswith("line 6: seq 16 does not follow seq 14 (expected 15)")


def test_a_slice_missing_its_first_event_is_rejected(tmp_path: Path) -> None:
    lines = _lines(WHOLE[10:])
    del lines[1]
    message = _load_error(tmp_path, _resealed(lines))
    assert message.endswith(
        "line 2: seq 12 does not follow the header (expected 11, the header's first_seq)"
    )


def test_a_whole_history_missing_its_first_lines_is_still_rejected(tmp_path: Path) -> None:
    lines = _lines(WHOLE)
    del lines[1:11]  # looks like WHOLE[10:], but its header names no first_seq
    message = _load_error(tmp_path, _resealed(lines))
    assert message.endswith("line 2: seq 11 does not follow the header (expected 1)")


@pytest.mark.parametrize("first_seq", [1, 10, 12])
def test_a_changed_first_seq_is_rejected(tmp_path: Path, first_seq: int) -> None:
    message = _load_error(tmp_path, _resealed(_lines(WHOLE[10:]), first_seq=first_seq))
    assert f"line 2: seq 11 does not follow the header (expected {first_seq}" in message


def test_first_seq_added_to_a_whole_history_is_rejected(tmp_path: Path) -> None:
    message = _load_error(tmp_path, _resealed(_lines(WHOLE), first_seq=2))
    assert message.endswith(
        "line 2: seq 1 does not follow the header (expected 2, the header's first_seq)"
    )


def test_a_slice_cut_short_or_edited_fails_the_count_or_the_digest(tmp_path: Path) -> None:
    lines = _lines(WHOLE[10:])
    cut = "\n".join(lines[:-3]) + "\n"
    assert "the header announces" in _load_error(tmp_path, cut)
    edited = "\n".join(lines).replace('"reviewer-1"', '"reviewer-9"', 1) + "\n"
    assert "do not match the header's sha256" in _load_error(tmp_path, edited)


@pytest.mark.parametrize("value", [0, -1, "11", True, 1.5, None, 2**64, [11]])
def test_a_malformed_first_seq_is_rejected_on_line_1(tmp_path: Path, value: object) -> None:
    lines = _lines(WHOLE[10:])
    header = json.loads(lines[0])
    header["first_seq"] = value
    text = json.dumps(header) + "\n" + "\n".join(lines[1:]) + "\n"
    if value is None:  # null means "not given": the slice then does not start at 1
        assert "seq 11 does not follow the header (expected 1)" in _load_error(tmp_path, text)
        return
    assert "line 1: header first_seq must be a seq (1 or more)" in _load_error(tmp_path, text)


def test_first_seq_without_events_is_rejected() -> None:
    header = json.loads(History().to_jsonl())
    header["first_seq"] = 11
    with pytest.raises(HistoryFormatError, match="first_seq 11 announces events, the file has"):
        History.from_jsonl(json.dumps(header) + "\n")


# -- what cannot be read back is not written --------------------------------------------------


def test_a_selection_that_skips_seq_numbers_is_not_written(tmp_path: Path) -> None:
    target = tmp_path / "every-other.jsonl"
    with pytest.raises(ValueError, match="event 1 has seq 3 after seq 1; save consecutive"):
        WHOLE[::2].save(target)
    assert not target.exists()
    with pytest.raises(ValueError, match="event 2 has seq 2 after seq 2"):
        History([WHOLE[0], WHOLE[1], WHOLE[1]]).to_jsonl()


def test_a_history_whose_first_seq_is_0_is_not_written() -> None:
    event = WHOLE[0]
    zero = Event(0, event.time_ns, event.kind, event.flow_id, event.run_id, None, None, None,
                 None, dict(event.payload))
    with pytest.raises(ValueError, match="first event has seq 0"):
        History([zero]).to_jsonl()


# -- views read a loaded slice ----------------------------------------------------------------


@pytest.mark.parametrize("start", [10, 25])
def test_views_read_a_loaded_slice_as_they_read_the_slice_in_memory(
    tmp_path: Path, start: int
) -> None:
    piece = WHOLE[start:]
    loaded = History.load(piece.save(tmp_path / "slice.jsonl"))
    run = build_executions(loaded)
    assert list(run) == list(build_executions(piece))
    assert run.close is not None and run.close.status == "COMPLETED"
    assert execution_graph(loaded).to_dot() == execution_graph(piece).to_dot()
    assert exclusive_sections(loaded, TOKEN) == exclusive_sections(piece, TOKEN)
    assert state_at(loaded, -1) == state_at(piece, -1)


def test_the_timeline_draws_a_loaded_slice(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from dexviz.viz.timeline import timeline, timeline_svg

    piece = WHOLE[10:]
    loaded = History.load(piece.save(tmp_path / "slice.jsonl"))
    svg = timeline_svg(timeline(loaded, channel=TOKEN))
    assert svg.startswith("<?xml") or "<svg" in svg[:500]
    assert svg == timeline_svg(timeline(piece, channel=TOKEN))


def test_dexviz_history_summarises_a_saved_slice(tmp_path: Path, capsys: Any) -> None:
    path = WHOLE[10:].save(tmp_path / "slice.jsonl")
    assert cli_main(["history", str(path)]) == 0
    assert "COMPLETED" in capsys.readouterr().out


def test_the_html_replay_of_a_loaded_slice_is_the_slice_s(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from dexviz.report import report_html

    piece = WHOLE[10:]
    loaded = History.load(piece.save(tmp_path / "slice.jsonl"))
    assert report_html(loaded) == report_html(piece)
