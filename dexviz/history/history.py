"""History: a Flow's ordered events, with a deterministic JSON-lines form."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, overload

from dexviz.history.event import Event
from dexviz.history.kinds import EventKind, kind_of

FORMAT_NAME = "dexviz-history"
FORMAT_VERSION = 1

_FIELDS: tuple[tuple[str, tuple[type, ...], bool], ...] = (
    ("seq", (int,), False),
    ("time_ns", (int,), False),
    ("kind", (str,), False),
    ("flow_id", (str,), False),
    ("run_id", (str,), False),
    ("execution_id", (str,), True),
    ("step_type", (str,), True),
    ("method", (str,), True),
    ("attempt", (int,), True),
    ("payload", (dict,), False),
)


class HistoryFormatError(ValueError):
    """A history file or text is malformed; the message names the line."""


class History(Sequence[Event]):
    """The events of one Flow (all its runs), in commit order; the source of every view."""

    __slots__ = ("_events",)

    def __init__(self, events: Iterable[Event] = ()) -> None:
        # A tuple here; an append-only subclass (the debugger's live history) keeps a list.
        self._events: Sequence[Event] = tuple(events)

    @overload
    def __getitem__(self, index: int) -> Event: ...

    @overload
    def __getitem__(self, index: slice) -> History: ...

    def __getitem__(self, index: int | slice) -> Event | History:
        if isinstance(index, slice):
            return History(self._events[index])
        return self._events[index]

    def __len__(self) -> int:
        return len(self._events)

    def __iter__(self) -> Iterator[Event]:
        return iter(self._events)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, History) and tuple(self._events) == tuple(other._events)

    def __hash__(self) -> int:
        return hash(tuple(self._events))

    def __repr__(self) -> str:
        return f"History(flow_id={self.flow_id!r}, events={len(self._events)})"

    @property
    def events(self) -> tuple[Event, ...]:
        """The events in order."""
        return tuple(self._events)

    @property
    def flow_id(self) -> str | None:
        """The Flow id, or None for an empty history."""
        return self._events[0].flow_id if self._events else None

    @property
    def run_ids(self) -> tuple[str, ...]:
        """The run ids in the order they appear."""
        return tuple(dict.fromkeys(e.run_id for e in self._events))

    @property
    def start(self) -> Event | None:
        """The first FlowStartedOrContinued event (it carries the Flow's spec)."""
        found = self.of_kind(EventKind.FLOW_STARTED_OR_CONTINUED)
        return found[0] if found else None

    @property
    def flow_spec(self) -> Mapping[str, Any]:
        """The Flow's description recorded at start: type, Steps, Channels, Attributes."""
        start = self.start
        spec = start.payload.get("flow") if start is not None else None
        return spec if isinstance(spec, Mapping) else {}

    def of_kind(self, *kinds: EventKind | str) -> list[Event]:
        """The events whose kind is one of ``kinds``."""
        wanted = {str(k) for k in kinds}
        return [e for e in self._events if str(e.kind) in wanted]

    def for_execution(self, execution_id: str) -> list[Event]:
        """The events of one Step execution."""
        return [e for e in self._events if e.execution_id == execution_id]

    def to_jsonl(self) -> str:
        """Return the history as JSON lines: a header, then one event per line (sorted keys)."""
        header = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "flow_id": self.flow_id}
        lines = [json.dumps(header, sort_keys=True, separators=(",", ":"))]
        dumps = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode
        lines.extend(dumps(event.to_dict()) for event in self._events)
        return "\n".join(lines) + "\n"

    @classmethod
    def from_jsonl(cls, text: str | Iterable[str]) -> History:
        """Load a history written by ``to_jsonl``; malformed input raises HistoryFormatError."""
        lines = text.splitlines() if isinstance(text, str) else list(text)
        events: list[Event] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            record = _parse_line(line, number)
            if "format" in record and "seq" not in record:
                _check_header(record, number)
                continue
            event = _event_from_record(record, number)
            if events and event.seq <= events[-1].seq:
                raise HistoryFormatError(
                    f"line {number}: seq {event.seq} does not follow seq {events[-1].seq}"
                )
            events.append(event)
        return cls(events)

    def save(self, path: str | Path) -> Path:
        """Write ``to_jsonl()`` to ``path`` and return the path."""
        target = Path(path)
        target.write_text(self.to_jsonl(), encoding="utf-8")
        return target

    @classmethod
    def load(cls, path: str | Path) -> History:
        """Read a history file written by ``save``; errors name the file and line."""
        source = Path(path)
        try:
            return cls.from_jsonl(source.read_text(encoding="utf-8"))
        except HistoryFormatError as error:
            raise HistoryFormatError(f"{source}: {error}") from None


def _parse_line(line: str, number: int) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise HistoryFormatError(f"line {number}: invalid JSON ({error.msg})") from None
    if not isinstance(record, dict):
        raise HistoryFormatError(
            f"line {number}: expected a JSON object, got {type(record).__name__}"
        )
    return record


def _check_header(record: Mapping[str, Any], number: int) -> None:
    if record.get("format") != FORMAT_NAME:
        raise HistoryFormatError(f"line {number}: unknown format {record.get('format')!r}")
    version = record.get("version")
    if version != FORMAT_VERSION:
        raise HistoryFormatError(
            f"line {number}: unsupported version {version!r} (this dexviz reads {FORMAT_VERSION})"
        )


def _event_from_record(record: Mapping[str, Any], number: int) -> Event:
    values: list[Any] = []
    for name, types, optional in _FIELDS:
        if name not in record:
            raise HistoryFormatError(f"line {number}: missing field {name!r}")
        value = record[name]
        if value is None and optional:
            values.append(None)
            continue
        if not isinstance(value, types) or (types == (int,) and isinstance(value, bool)):
            expected = " or ".join(t.__name__ for t in types)
            raise HistoryFormatError(
                f"line {number}: field {name!r} must be {expected}, got {type(value).__name__}"
            )
        values.append(value)
    values[2] = kind_of(values[2])
    return Event(*values)
