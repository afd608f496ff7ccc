"""The JSON-lines form of a history: writing it, and reading it back with every check.

The writer escapes the characters Python's ``str.splitlines`` treats as line breaks (U+0085,
U+2028, U+2029) and records in the header how many events follow and the SHA-256 of their lines.
A slice of a history (``history[10:]``) keeps its events' ``seq``: the header then names the
first one (``first_seq``), so the slice loads while a file that lost its first lines does not.
The reader splits on newlines only and rejects, naming the line, anything dexviz would not have
written: a missing, repeated or unknown header, a gap or repeat in ``seq``, an event of another
Flow, time going backwards, NaN or Infinity, over-deep nesting, a cut-off or changed file.
It returns all the events or raises :class:`HistoryFormatError`; it never half-loads.
"""

from __future__ import annotations

import json
import math
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dexviz.history.event import Event
from dexviz.history.kinds import kind_of

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "HistoryFormatError",
    "decode_history_bytes",
    "dump_jsonl",
    "load_json",
    "order_problem",
    "parse_jsonl",
    "read_history_file",
]

FORMAT_NAME = "dexviz-history"
FORMAT_VERSION = 1
INT64_MAX = 2**63 - 1
"""``seq``, ``time_ns`` and ``attempt`` are 64-bit integers, as in Dex."""

_HEADER_KEYS = frozenset({"format", "version", "flow_id", "events", "sha256", "first_seq"})
_REQUIRED_HEADER_KEYS = frozenset({"format", "version", "flow_id"})
_LINE_BREAKS = {"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_FIELDS: tuple[tuple[str, type, bool], ...] = (
    ("seq", int, False),
    ("time_ns", int, False),
    ("kind", str, False),
    ("flow_id", str, False),
    ("run_id", str, False),
    ("execution_id", str, True),
    ("step_type", str, True),
    ("method", str, True),
    ("attempt", int, True),
    ("payload", dict, False),
)


class HistoryFormatError(ValueError):
    """A history file or text is malformed; the message names the file (if any) and the line."""


def dump_jsonl(flow_id: str | None, events: Sequence[Event]) -> str:
    """The JSON-lines text of a history: a header line, then one sorted-key event per line.

    The header names the first ``seq`` (``first_seq``) when it is not 1, as in a slice.

    Raises:
        ValueError: The events' ``seq`` are not consecutive from 1 or more (such as
            ``history[::2]``): no reader could tell that file from a damaged one.
    """
    first_seq = _first_consecutive_seq(events)
    encode = json.JSONEncoder(
        sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode
    body = "".join(_escape_line_breaks(encode(event.to_dict())) + "\n" for event in events)
    header: dict[str, object] = {
        "events": body.count("\n"),
        "flow_id": flow_id,
        "format": FORMAT_NAME,
        "sha256": _digest(body),
        "version": FORMAT_VERSION,
    }
    if first_seq != 1:
        header["first_seq"] = first_seq
    return json.dumps(header, sort_keys=True, separators=(",", ":")) + "\n" + body


def _first_consecutive_seq(events: Sequence[Event]) -> int:
    """The first event's ``seq`` (1 when there is none), after checking that each is the next."""
    if not events:
        return 1
    first = events[0].seq
    if first < 1:
        raise ValueError(f"cannot write a history whose first event has seq {first} (1-based)")
    for index, event in enumerate(events):
        if event.seq != first + index:
            raise ValueError(
                f"cannot write a history whose events skip or repeat seq numbers: event {index} "
                f"has seq {event.seq} after seq {events[index - 1].seq}; save consecutive events "
                "(the whole history, or a slice such as history[10:20]), not a selection"
            )
    return first


def read_history_file(path: Path) -> bytes:
    """The bytes of a history file; a FIFO, device or socket is refused, never read forever.

    Raises:
        HistoryFormatError: ``path`` is not a regular file.
        OSError: It cannot be read (missing, a directory, no permission, a path too long).
    """
    mode = path.stat().st_mode
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        kind = "FIFO" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode) else "device"
        raise HistoryFormatError(f"not a regular file (a {kind}), so not a history file")
    return path.read_bytes()


def decode_history_bytes(data: bytes) -> str:
    """Decode a history file's bytes as UTF-8; a bad byte raises naming its line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise HistoryFormatError(
            f"line {line}: not UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start})"
        ) from None


def parse_jsonl(text: str | Iterable[str]) -> list[Event]:
    """Read the events of a history's JSON-lines text (or its lines), checking everything.

    Raises:
        HistoryFormatError: The text is not a history dexviz wrote; the message names the line.
    """
    lines = _split(text)
    if not any(line.strip() for line in lines):
        raise HistoryFormatError("empty history: no header line")
    cut = len(lines) if not _ends_with_newline(text) else 0  # an unterminated last line
    header = _Header.read(lines[0], cut == 1)
    reader = _EventChecker(header)
    for number, line in enumerate(lines[1:], start=2):
        reader.add(line, number, cut == number)
    return reader.finish(lines)


def _split(text: str | Iterable[str]) -> list[str]:
    raw = text.split("\n") if isinstance(text, str) else [line.rstrip("\n") for line in text]
    if isinstance(text, str) and raw and raw[-1] == "":
        raw.pop()  # the newline ending the last line
    # A file moved through a CRLF checkout still loads: the digest is over LF lines.
    return [line[:-1] if line.endswith("\r") else line for line in raw]


def _ends_with_newline(text: str | Iterable[str]) -> bool:
    return not isinstance(text, str) or text.endswith("\n")


def _escape_line_breaks(line: str) -> str:
    # JSON allows these raw inside strings, but splitlines() (and many editors) break lines there.
    if "\u0085" in line or "\u2028" in line or "\u2029" in line:
        for char, escape in _LINE_BREAKS.items():
            line = line.replace(char, escape)
    return line


def _digest(body: str) -> str:
    import hashlib  # only for a digest: importing hashlib loads OpenSSL

    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:20]} is out of range")
    return value


def load_json(text: str) -> Any:
    """One JSON value, read as strictly as each history line (the SQLite store reads its bodies so).

    Raises:
        ValueError: Not JSON, NaN or Infinity, a float out of range, an integer of more than
            4300 digits, or nested too deeply; the message is the reason, without a place.
    """
    try:
        try:
            value, end = _SCAN_ONCE(text, 0)  # the C scanner alone: most texts end there
        except StopIteration:
            end = -1
        return value if end == len(text) else _DECODER.decode(text)  # the full rules
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"invalid JSON ({error.msg})") from None
    except ValueError as error:  # NaN, Infinity, a float overflow, an int over 4300 digits
        raise ValueError(f"invalid JSON value ({str(error).splitlines()[0]})") from None


def order_problem(
    previous: tuple[int, int] | None,
    seq: int,
    time_ns: int,
    first: int = 1,
    start: str = "the header",
) -> str:
    """Why an event (``seq``, ``time_ns``) cannot follow ``previous`` (``""`` when it can).

    ``seq`` is the previous one's plus one (``first`` after ``start``); time never goes back.
    """
    expected = first if previous is None else previous[0] + 1
    if seq != expected:
        after = start if previous is None else f"seq {previous[0]}"
        return f"seq {seq} does not follow {after} (expected {expected})"
    if previous is not None and time_ns < previous[1]:
        return f"time goes backwards (time_ns {time_ns} after {previous[1]})"
    return ""


# One decoder for every text: json.loads with hooks would build one per call.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)
_SCAN_ONCE = vars(_DECODER)["scan_once"]  # its C scanner (an attribute typeshed omits)


def _parse_line(line: str, number: int, unterminated: bool = False) -> dict[str, Any]:
    if not line.strip():
        raise HistoryFormatError(f"line {number}: blank line")
    try:
        record = load_json(line)
    except ValueError as error:
        reason = str(error)
        if unterminated and reason.startswith("invalid JSON ("):
            reason = "truncated last line, " + reason
        raise HistoryFormatError(f"line {number}: {reason}") from None
    if not isinstance(record, dict):
        raise HistoryFormatError(
            f"line {number}: expected a JSON object, got {type(record).__name__}"
        )
    return record


@dataclass(frozen=True)
class _Header:
    """The first line: format, version, Flow id, and (from dexviz 0.2) event count and digest."""

    flow_id: str | None
    events: int | None
    sha256: str | None
    first_seq: int | None = None

    @classmethod
    def read(cls, line: str, unterminated: bool) -> _Header:
        record = _parse_line(line, 1, unterminated)
        if "seq" in record or "format" not in record:
            raise HistoryFormatError("line 1: missing header (a dexviz-history format line)")
        if record["format"] != FORMAT_NAME:
            raise HistoryFormatError(f"line 1: unknown format {_short(record['format'])}")
        version = record.get("version")
        if type(version) is not int or version != FORMAT_VERSION:
            raise HistoryFormatError(
                f"line 1: unsupported version {_short(version)} "
                f"(this dexviz reads {FORMAT_VERSION})"
            )
        unknown = sorted(set(record) - _HEADER_KEYS)
        missing = sorted(_REQUIRED_HEADER_KEYS - set(record))
        if unknown or missing:
            what = f"unknown header field {unknown[0]!r}" if unknown else f"no {missing[0]!r}"
            raise HistoryFormatError(f"line 1: {what}")
        return cls(
            _header_flow_id(record),
            _header_count(record),
            _header_digest(record),
            _header_first_seq(record),
        )


def _header_flow_id(record: Mapping[str, Any]) -> str | None:
    flow_id = record["flow_id"]
    if flow_id is not None and (not isinstance(flow_id, str) or not flow_id):
        raise HistoryFormatError(f"line 1: header flow_id must be a string, got {_short(flow_id)}")
    return flow_id


def _header_count(record: Mapping[str, Any]) -> int | None:
    count = record.get("events")
    if count is not None and (type(count) is not int or not 0 <= count <= INT64_MAX):
        raise HistoryFormatError(f"line 1: header events must be a count, got {_short(count)}")
    return count


def _header_first_seq(record: Mapping[str, Any]) -> int | None:
    first = record.get("first_seq")
    if first is not None and (type(first) is not int or not 1 <= first <= INT64_MAX):
        raise HistoryFormatError(
            f"line 1: header first_seq must be a seq (1 or more), got {_short(first)}"
        )
    return first


def _header_digest(record: Mapping[str, Any]) -> str | None:
    digest = record.get("sha256")
    if digest is not None and (
        not isinstance(digest, str) or len(digest) != 64 or digest.strip("0123456789abcdef")
    ):
        raise HistoryFormatError(f"line 1: header sha256 is not a SHA-256, got {_short(digest)}")
    return digest


class _EventChecker:
    """Checks each event line against the header and the previous event."""

    def __init__(self, header: _Header) -> None:
        self.header = header
        self.events: list[Event] = []

    def add(self, line: str, number: int, unterminated: bool) -> None:
        record = _parse_line(line, number, unterminated)
        if "format" in record and "seq" not in record:
            raise HistoryFormatError(f"line {number}: a second header")
        event = _event_from_record(record, number)
        self._check_order(event, number)
        self.events.append(event)

    def _check_order(self, event: Event, number: int) -> None:
        flow_id = self.header.flow_id
        if event.flow_id != flow_id:
            raise HistoryFormatError(
                f"line {number}: event of Flow {event.flow_id!r} in the history of "
                f"{_short(flow_id)}"
            )
        previous = self.events[-1] if self.events else None
        first_seq = self.header.first_seq
        problem = order_problem(
            None if previous is None else (previous.seq, previous.time_ns),
            event.seq,
            event.time_ns,
            first_seq or 1,
        )
        if problem:
            if previous is None and first_seq:
                problem = problem[:-1] + ", the header's first_seq)"
            raise HistoryFormatError(f"line {number}: {problem}")

    def finish(self, lines: Sequence[str]) -> list[Event]:
        header = self.header
        last = len(lines)
        if header.first_seq is not None and not self.events:
            raise HistoryFormatError(
                f"line {last}: the header's first_seq {header.first_seq} announces events, the "
                "file has none"
            )
        if header.events is not None and header.events != len(self.events):
            raise HistoryFormatError(
                f"line {last}: the header announces {header.events} events, the file has "
                f"{len(self.events)} (cut short or extended?)"
            )
        if header.sha256 is not None:
            body = "".join(line + "\n" for line in lines[1:])
            if _digest(body) != header.sha256:
                raise HistoryFormatError(
                    "line 1: the events do not match the header's sha256 (changed after "
                    "dexviz wrote it; to load a hand-edited file, drop 'events' and 'sha256')"
                )
        return self.events


def _event_from_record(record: Mapping[str, Any], number: int) -> Event:
    unknown = sorted(set(record) - {name for name, _, _ in _FIELDS})
    if unknown:
        raise HistoryFormatError(f"line {number}: unknown field {_short(unknown[0])}")
    values: list[Any] = []
    for name, kind, optional in _FIELDS:
        if name not in record:
            raise HistoryFormatError(f"line {number}: missing field {name!r}")
        value: Any = record[name]
        if value is None and optional:
            values.append(None)
            continue
        if type(value) is not kind:
            raise HistoryFormatError(
                f"line {number}: field {name!r} must be {kind.__name__}, got "
                f"{type(value).__name__}"
            )
        low = 1 if name == "attempt" else 0
        if isinstance(value, int) and not low <= value <= INT64_MAX:
            raise HistoryFormatError(f"line {number}: field {name!r} out of range: {_short(value)}")
        values.append(value)
    if not values[2]:
        raise HistoryFormatError(f"line {number}: field 'kind' is empty")
    values[2] = kind_of(values[2])
    return Event(*values)


def _short(value: object) -> str:
    """A repr cut to one short line, so a huge value never floods the message."""
    text = repr(value) if not isinstance(value, int) or value.bit_length() < 200 else "<huge int>"
    return text if len(text) <= 60 else text[:57] + "..."
