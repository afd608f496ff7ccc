"""Damaged history files: each is rejected naming the file and the line; nothing half-loads.

Every case starts from a real run's history file and damages it one way. Where the damage is
structural (a seq gap, an event of another Flow, time going backwards...), the header's event
count and digest are rewritten to match, so the test proves that the structural check itself
catches it. The Hypothesis test damages the file at a random place and checks that the loader
returns exactly the original history or raises HistoryFormatError — never anything else.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dexviz import Context, Step, StepDecision, graceful_complete, simulate
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
from dexviz.history import History, HistoryFormatError
from tests.engine.flows_a import AdHocFlow

ORIGINAL = simulate(ContractEditFlow(), sample_edits(2), seed=1).history
TEXT = ORIGINAL.to_jsonl()
LINES = TEXT.splitlines()
RAW_TEXT = TEXT.encode()
EVENTS = len(LINES) - 1


def _record(number: int) -> dict[str, Any]:
    """The parsed line ``number`` (1-based; line 1 is the header)."""
    return json.loads(LINES[number - 1])  # type: ignore[no-any-return]


def _dump(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _resealed(lines: list[str]) -> str:
    """The lines with the header's event count and digest recomputed (damage stays visible)."""
    header = json.loads(lines[0])
    body = "".join(line + "\n" for line in lines[1:])
    if "events" in header:
        header["events"] = len(lines) - 1
    if "sha256" in header:
        header["sha256"] = hashlib.sha256(body.encode()).hexdigest()
    return _dump(header) + "\n" + body


def _with_event(number: int, **changes: Any) -> str:
    """The history with line ``number``'s fields changed, resealed."""
    record = _record(number)
    record.update(changes)
    lines = list(LINES)
    lines[number - 1] = _dump(record)
    return _resealed(lines)


def _with_payload(number: int, payload_json: str) -> str:
    """The history with line ``number``'s payload replaced by raw JSON text, resealed."""
    record = _record(number)
    record["payload"] = {}
    lines = list(LINES)
    lines[number - 1] = _dump(record).replace('"payload":{}', f'"payload":{payload_json}')
    return _resealed(lines)


def _with_header(**changes: Any) -> str:
    header = _record(1)
    for key, value in changes.items():
        if value is _DROP:
            header.pop(key)
        else:
            header[key] = value
    return _dump(header) + "\n" + "\n".join(LINES[1:]) + "\n"


def _with_lines(edit: Callable[[list[str]], None], reseal: bool = True) -> str:
    lines = list(LINES)
    edit(lines)
    return _resealed(lines) if reseal else "\n".join(lines) + "\n"


_DROP = object()

# (id, file contents, expected line or None for a whole-file problem, words of the reason)
CASES: list[tuple[str, str | bytes, int | None, str]] = [
    ("empty", "", None, "empty history"),
    ("one newline", "\n", None, "empty history"),
    ("whitespace only", " \n\t\n  \n", None, "empty history"),
    ("missing header", _with_lines(lambda ls: ls.pop(0), reseal=False), 1, "missing header"),
    ("header is an event", "\n".join(LINES[1:]) + "\n", 1, "missing header"),
    ("header twice", _with_lines(lambda ls: ls.insert(1, ls[0])), 2, "second header"),
    ("header in the middle", _with_lines(lambda ls: ls.insert(5, ls[0])), 6, "second header"),
    ("version 2", _with_header(version=2), 1, "unsupported version 2"),
    ("version 0", _with_header(version=0), 1, "unsupported version 0"),
    ("version '1'", _with_header(version="1"), 1, "unsupported version '1'"),
    ("version 1.0", _with_header(version=1.0), 1, "unsupported version 1.0"),
    ("version true", _with_header(version=True), 1, "unsupported version True"),
    ("version null", _with_header(version=None), 1, "unsupported version None"),
    ("version list", _with_header(version=[1]), 1, "unsupported version [1]"),
    ("version huge", _with_header(version=10**30), 1, "unsupported version 1000"),
    ("version missing", _with_header(version=_DROP), 1, "unsupported version None"),
    ("format other", _with_header(format="other"), 1, "unknown format 'other'"),
    ("format int", _with_header(format=1), 1, "unknown format 1"),
    ("format missing", _with_header(format=_DROP), 1, "missing header"),
    ("flow id missing", _with_header(flow_id=_DROP), 1, "no 'flow_id'"),
    ("flow id int", _with_header(flow_id=7), 1, "header flow_id must be a string"),
    ("flow id empty", _with_header(flow_id=""), 1, "header flow_id must be a string"),
    ("flow id differs", _with_header(flow_id="other"), 2, "event of Flow 'flow-1'"),
    ("flow id null with events", _with_header(flow_id=None), 2, "in the history of None"),
    ("unknown header field", _with_header(extra=1), 1, "unknown header field 'extra'"),
    ("event count negative", _with_header(events=-1), 1, "header events must be a count"),
    ("event count text", _with_header(events="3"), 1, "header events must be a count"),
    ("event count bool", _with_header(events=True), 1, "header events must be a count"),
    ("event count low", _with_header(events=EVENTS - 1), EVENTS + 1, "announces"),
    ("event count high", _with_header(events=EVENTS + 5), EVENTS + 1, "cut short"),
    ("digest not hex", _with_header(sha256="z" * 64), 1, "not a SHA-256"),
    ("digest short", _with_header(sha256="ab"), 1, "not a SHA-256"),
    ("digest int", _with_header(sha256=5), 1, "not a SHA-256"),
    ("digest upper case", _with_header(sha256="A" * 64), 1, "not a SHA-256"),
    ("digest of other events", _with_header(sha256="0" * 64), 1, "sha256"),
    ("seq gap", _with_lines(lambda ls: ls.pop(4)), 5, "seq 5 does not follow seq 3"),
    ("seq repeat", _with_lines(lambda ls: ls.insert(4, ls[3])), 5, "seq 3 does not follow seq 3"),
    ("seq swap", _with_lines(lambda ls: ls.insert(3, ls.pop(4))), 4, "seq 4 does not follow"),
    ("first seq 2", _with_lines(lambda ls: ls.pop(1)), 2, "does not follow the header"),
    ("seq 0", _with_event(2, seq=0), 2, "seq 0 does not follow the header"),
    ("seq negative", _with_event(2, seq=-1), 2, "field 'seq' out of range"),
    ("seq too big", _with_event(3, seq=2**64), 3, "field 'seq' out of range"),
    ("seq text", _with_event(3, seq="2"), 3, "field 'seq' must be int, got str"),
    ("seq float", _with_event(3, seq=2.0), 3, "field 'seq' must be int, got float"),
    ("seq bool", _with_event(2, seq=True), 2, "field 'seq' must be int, got bool"),
    ("seq null", _with_event(2, seq=None), 2, "field 'seq' must be int, got NoneType"),
    ("event of another Flow", _with_event(4, flow_id="flow-2"), 4, "event of Flow 'flow-2'"),
    ("time backwards", _with_event(6, time_ns=0), 6, "time goes backwards"),
    ("time negative", _with_event(2, time_ns=-5), 2, "field 'time_ns' out of range"),
    ("time huge", _with_event(9, time_ns=10**30), 9, "field 'time_ns' out of range"),
    ("time float", _with_event(3, time_ns=1.5), 3, "field 'time_ns' must be int"),
    ("kind int", _with_event(3, kind=3), 3, "field 'kind' must be str"),
    ("kind empty", _with_event(3, kind=""), 3, "field 'kind' is empty"),
    ("run id null", _with_event(3, run_id=None), 3, "field 'run_id' must be str"),
    ("execution id int", _with_event(3, execution_id=1), 3, "field 'execution_id' must be str"),
    ("step type list", _with_event(3, step_type=["A"]), 3, "field 'step_type' must be str"),
    ("method dict", _with_event(3, method={}), 3, "field 'method' must be str"),
    ("attempt zero", _with_event(3, attempt=0), 3, "field 'attempt' out of range"),
    ("attempt text", _with_event(3, attempt="1"), 3, "field 'attempt' must be int"),
    ("payload list", _with_event(3, payload=[]), 3, "field 'payload' must be dict"),
    ("payload null", _with_event(3, payload=None), 3, "field 'payload' must be dict"),
    ("unknown field", _with_event(3, colour="red"), 3, "unknown field 'colour'"),
    ("NaN", _with_payload(4, '{"x":NaN}'), 4, "NaN is not a JSON number"),
    ("Infinity", _with_payload(4, '{"x":Infinity}'), 4, "Infinity is not a JSON number"),
    ("-Infinity", _with_payload(4, '{"x":[-Infinity]}'), 4, "-Infinity is not a JSON number"),
    ("float overflow", _with_payload(5, '{"x":1e400}'), 5, "out of range"),
    ("huge integer", _with_payload(5, '{"x":' + "9" * 5000 + "}"), 5, "invalid JSON value"),
    ("nested lists", _with_payload(3, "[" * 100_000 + "]" * 100_000), 3, "nested too deeply"),
    (
        "nested objects",
        _with_payload(3, '{"a":' * 100_000 + "1" + "}" * 100_000),
        3,
        "nested too deeply",
    ),
    ("garbage line", _with_lines(lambda ls: ls.insert(3, "garbage")), 4, "invalid JSON"),
    ("open brace", _with_lines(lambda ls: ls.insert(3, "{")), 4, "invalid JSON"),
    ("json null", _with_lines(lambda ls: ls.insert(3, "null")), 4, "got NoneType"),
    ("json number", _with_lines(lambda ls: ls.insert(3, "42")), 4, "got int"),
    ("json string", _with_lines(lambda ls: ls.insert(3, '"event"')), 4, "got str"),
    ("json list", _with_lines(lambda ls: ls.insert(3, "[]")), 4, "got list"),
    ("blank line in the middle", _with_lines(lambda ls: ls.insert(3, "")), 4, "blank line"),
    ("spaces line", _with_lines(lambda ls: ls.insert(3, "   ")), 4, "blank line"),
    ("two events on a line", _with_lines(lambda ls: ls.insert(2, ls.pop(2) + ls[2])), 3, "JSON"),
    ("truncated last line", TEXT[: len(TEXT) - 30], EVENTS + 1, "truncated last line"),
    ("truncated header", TEXT[:20], 1, "truncated last line"),
    ("cut at a line end", "\n".join(LINES[:-2]) + "\n", EVENTS - 1, "announces"),
    ("non-UTF-8 byte", TEXT.encode()[:300] + b"\xff" + TEXT.encode()[300:], None, "not UTF-8"),
    ("lone surrogate", TEXT.encode().replace(b"flow-1", b"flow\xed\xa0\x80", 3), None, "UTF-8"),
    ("latin-1 text", _with_event(3, run_id="caf\u00e9").encode("latin-1"), 3, "not UTF-8"),
    ("cut UTF-8", RAW_TEXT + "\u20ac".encode()[:2], None, "UTF-8"),
]


def _line_of_bytes_case(data: bytes) -> int:
    try:
        data.decode()
    except UnicodeDecodeError as error:
        return data.count(b"\n", 0, error.start) + 1
    raise AssertionError("valid UTF-8")


@pytest.mark.parametrize(("content", "line", "reason"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_a_damaged_file_is_rejected_naming_file_line_and_reason(
    tmp_path: Path, content: str | bytes, line: int | None, reason: str
) -> None:
    path = tmp_path / "damaged.jsonl"
    if isinstance(content, bytes):
        path.write_bytes(content)
        line = line or _line_of_bytes_case(content)
    else:
        path.write_text(content, encoding="utf-8", newline="\n")
    with pytest.raises(HistoryFormatError) as caught:
        History.load(path)
    message = str(caught.value)
    assert "\n" not in message
    prefix = f"{path}: line {line}: " if line is not None else f"{path}: "
    assert message.startswith(prefix), message
    assert reason in message, message
    assert len(message) < len(str(path)) + 200


def test_cases_cover_every_kind_of_damage() -> None:
    assert len(CASES) >= 85
    assert len({c[0] for c in CASES}) == len(CASES)


class Echo(Step[str]):
    def execute(self, context: Context, text: str) -> StepDecision:
        return graceful_complete({"text": text, "list": [text, text[::-1]]})


LINE_BREAKING = ["a\u2028b", "\u2029", "x\u0085y", "\u2028\u2029\u0085", "\r\n\x0b\x0c\x1c\x1d\x1e"]


@pytest.mark.parametrize("text", LINE_BREAKING, ids=repr)
def test_values_with_line_breaking_characters_round_trip(tmp_path: Path, text: str) -> None:
    history = simulate(AdHocFlow("Echo", Echo()), text).history
    path = history.save(tmp_path / "h.jsonl")
    written = path.read_text(encoding="utf-8")
    assert len(written.splitlines()) == len(history) + 1
    loaded = History.load(path)
    assert loaded == history
    assert loaded.to_jsonl() == written


def test_a_history_without_count_and_digest_still_loads() -> None:
    header = _record(1)
    del header["events"], header["sha256"]
    assert History.from_jsonl(_dump(header) + "\n" + "\n".join(LINES[1:])) == ORIGINAL


def test_an_empty_history_round_trips() -> None:
    assert History.from_jsonl(History().to_jsonl()) == History()


def test_crlf_line_ends_still_load() -> None:
    assert History.from_jsonl(TEXT.replace("\n", "\r\n")) == ORIGINAL


# -- the damage property ------------------------------------------------------------------------

def _unicode_history() -> History:
    """A history whose values hold multi-byte and line-breaking characters."""
    return simulate(AdHocFlow("Echo", Echo()), "caf\u00e9 \u20ac \u2028 \u0085 \U0001f600").history


ORIGINALS = {"contract edit": ORIGINAL, "unicode values": _unicode_history()}


def _lines(raw: bytes) -> list[bytes]:
    return raw.split(b"\n")[:-1]


def _drop(raw: bytes, data: st.DataObject) -> bytes:
    lines = _lines(raw)
    lines.pop(data.draw(st.integers(0, len(lines) - 1), label="drop"))
    return b"\n".join(lines) + b"\n"


def _duplicate(raw: bytes, data: st.DataObject) -> bytes:
    lines = _lines(raw)
    index = data.draw(st.integers(0, len(lines) - 1), label="duplicate")
    lines.insert(index, lines[index])
    return b"\n".join(lines) + b"\n"


def _swap(raw: bytes, data: st.DataObject) -> bytes:
    lines = _lines(raw)
    first = data.draw(st.integers(0, len(lines) - 1), label="swap")
    second = data.draw(st.integers(0, len(lines) - 1), label="with")
    lines[first], lines[second] = lines[second], lines[first]
    return b"\n".join(lines) + b"\n"


def _truncate(raw: bytes, data: st.DataObject) -> bytes:
    return raw[: data.draw(st.integers(0, len(raw)), label="keep")]


def _flip(raw: bytes, data: st.DataObject) -> bytes:
    position = data.draw(st.integers(0, len(raw) - 1), label="at")
    mask = data.draw(st.integers(1, 255), label="xor")
    return raw[:position] + bytes([raw[position] ^ mask]) + raw[position + 1 :]


DAMAGES = {"drop": _drop, "duplicate": _duplicate, "swap": _swap, "truncate": _truncate,
           "flip": _flip}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    original=st.sampled_from(sorted(ORIGINALS)),
    damage=st.sampled_from(sorted(DAMAGES)),
    data=st.data(),
)
def test_damage_anywhere_loads_the_original_or_raises_the_loader_error(
    original: str, damage: str, data: st.DataObject
) -> None:
    history = ORIGINALS[original]
    raw = history.to_jsonl().encode()
    damaged = DAMAGES[damage](raw, data)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "h.jsonl"
        path.write_bytes(damaged)
        try:
            loaded = History.load(path)
        except HistoryFormatError as error:
            assert str(error).startswith(f"{path}: ")
            assert "\n" not in str(error)
            return
    assert loaded == history
    assert loaded.to_jsonl().encode() == raw


def _socket_file(tmp_path: Path) -> Path:
    import socket

    path = tmp_path / "h.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()
    return path


def _fifo_file(tmp_path: Path) -> Path:
    import os

    path = tmp_path / "h.fifo"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(("make", "kind"), [
    (_fifo_file, "FIFO"),
    (_socket_file, "socket"),
    (lambda _: Path("/dev/zero"), "device"),
    (lambda _: Path("/dev/urandom"), "device"),
], ids=["fifo", "socket", "dev-zero", "dev-urandom"])
def test_a_special_file_is_refused_without_reading_it(
    tmp_path: Path, make: Callable[[Path], Path], kind: str
) -> None:
    import threading

    path = make(tmp_path)
    outcome: list[BaseException] = []

    def load() -> None:
        try:
            History.load(path)
        except BaseException as error:  # noqa: BLE001 - handed back to the test
            outcome.append(error)

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(10)
    assert outcome, f"History.load({path}) did not return within 10 s"
    assert isinstance(outcome[0], HistoryFormatError)
    assert str(outcome[0]) == f"{path}: not a regular file (a {kind}), so not a history file"


def test_a_directory_or_missing_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        History.load(tmp_path)
    with pytest.raises(FileNotFoundError):
        History.load(tmp_path / "missing.jsonl")
