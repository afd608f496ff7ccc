"""History: deterministic JSON lines, loading back, and errors that name the line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dexviz import simulate
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
from dexviz.history import Event, EventKind, History, HistoryFormatError

HEADER = '{"flow_id":"f","format":"dexviz-history","version":1}'


def _event(seq: int, kind: str = "FlowStartedOrContinued") -> str:
    return json.dumps(
        {
            "seq": seq,
            "time_ns": 1_000 * seq,
            "kind": kind,
            "flow_id": "f",
            "run_id": "r",
            "execution_id": None,
            "step_type": None,
            "method": None,
            "attempt": None,
            "payload": {},
        }
    )


def test_to_jsonl_round_trips_a_real_run() -> None:
    history = simulate(ContractEditFlow(), sample_edits(4), seed=2).history
    text = history.to_jsonl()
    loaded = History.from_jsonl(text)
    assert loaded.to_jsonl() == text
    assert [e.kind for e in loaded] == [e.kind for e in history]
    assert isinstance(loaded[0].kind, EventKind)


def test_to_jsonl_is_byte_identical_in_a_new_process() -> None:
    script = (
        "from dexviz import simulate\n"
        "from dexviz.examples.contract_edit import ContractEditFlow, sample_edits\n"
        "import sys\n"
        "run = simulate(ContractEditFlow(), sample_edits(3), seed=5)\n"
        "sys.stdout.write(run.history.to_jsonl())\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        ).stdout
        for _ in range(2)
    }
    local = simulate(ContractEditFlow(), sample_edits(3), seed=5).history.to_jsonl()
    assert outputs == {local}


def test_every_line_is_a_sorted_key_object_after_the_header() -> None:
    lines = simulate(ContractEditFlow(), sample_edits(2)).history.to_jsonl().splitlines()
    assert json.loads(lines[0])["format"] == "dexviz-history"
    for line in lines[1:]:
        record = json.loads(line)
        assert list(record) == sorted(record)


def test_unknown_event_kinds_are_kept_as_strings() -> None:
    history = History.from_jsonl("\n".join([HEADER, _event(1), _event(2, "SomeNewerDexEvent")]))
    assert history[1].kind == "SomeNewerDexEvent"
    assert not isinstance(history[1].kind, EventKind)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (HEADER + "\nnot json\n", "line 2: invalid JSON"),
        (HEADER + "\n[1, 2]\n", "line 2: expected a JSON object, got list"),
        (
            HEADER + "\n" + _event(1).replace('"seq": 1', '"seq": "1"'),
            "line 2: field 'seq' must be int",
        ),
        (HEADER + "\n" + _event(1).replace('"payload": {}', '"payload": []'), "field 'payload'"),
        (
            "\n".join([HEADER, _event(1), _event(2), _event(1)]),
            "line 4: seq 1 does not follow seq 2",
        ),
        ('{"format": "other", "version": 1}', "line 1: unknown format 'other'"),
        ('{"format": "dexviz-history", "version": 9}', "line 1: unsupported version 9"),
        (HEADER + "\n" + json.dumps({"seq": 1}), "line 2: missing field 'time_ns'"),
    ],
)
def test_malformed_input_names_the_line(text: str, message: str) -> None:
    with pytest.raises(HistoryFormatError, match=message):
        History.from_jsonl(text)


def test_load_names_the_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "broken.jsonl"
    path.write_text(HEADER + "\n{oops\n")
    with pytest.raises(HistoryFormatError, match=r"broken\.jsonl: line 2"):
        History.load(path)


def test_save_then_load(tmp_path) -> None:  # type: ignore[no-untyped-def]
    history = simulate(ContractEditFlow(), sample_edits(2)).history
    assert History.load(history.save(tmp_path / "h.jsonl")) == history


def test_slicing_and_filters() -> None:
    history = simulate(ContractEditFlow(), sample_edits(2)).history
    assert isinstance(history[1:3], History) and len(history[1:3]) == 2
    assert all(e.kind == EventKind.FLOW_CLOSED for e in history.of_kind(EventKind.FLOW_CLOSED))
    first = history.for_execution("StartContractEdits-1")
    assert first and all(e.execution_id == "StartContractEdits-1" for e in first)
    assert history.flow_spec["flow_type"] == "ContractEditFlow"
    assert repr(history).startswith("History(flow_id='flow-1', events=")


def test_event_describe_and_dict() -> None:
    event = Event(3, 5, EventKind.ATTEMPT_STARTED, "f", "r", "A-1", "A", "execute", 2, {})
    assert event.describe() == "#3 AttemptStarted A-1 (execute #2)"
    assert event.to_dict()["kind"] == "AttemptStarted"


def test_lazy_payload_reads_like_the_dict_it_builds() -> None:
    from dexviz.history.event import LazyPayload

    calls: list[int] = []

    def build(a: int, b: str) -> dict[str, object]:
        calls.append(1)
        return {"b": b, "a": a}

    payload = LazyPayload(build, 1, "x")
    assert calls == []
    event = Event(1, 0, EventKind.ATTEMPT_STARTED, "f", "r", None, None, None, None, payload)
    assert event.payload == {"a": 1, "b": "x"} and {"a": 1, "b": "x"} == event.payload
    assert event.payload["a"] == 1 and event.payload.get("c", 3) == 3 and "b" in event.payload
    assert list(event.payload) == ["b", "a"] and len(event.payload) == 2
    assert event.to_dict()["payload"] == {"b": "x", "a": 1}
    assert repr(event.payload) == "{'b': 'x', 'a': 1}"
    assert event == Event(1, 0, EventKind.ATTEMPT_STARTED, "f", "r", None, None, None, None,
                          {"a": 1, "b": "x"})
    assert calls == [1]


def test_a_pickled_lazy_payload_is_the_dict_whether_or_not_it_was_read() -> None:
    import pickle

    from dexviz.history.event import LazyPayload

    def build(a: int) -> dict[str, object]:
        return {"a": a}

    unread, read = LazyPayload(build, 1), LazyPayload(build, 1)
    assert read["a"] == 1
    assert pickle.dumps(unread) == pickle.dumps(read)
    assert pickle.loads(pickle.dumps(unread)) == {"a": 1}
