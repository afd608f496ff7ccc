"""History: a Flow's ordered events, with a deterministic JSON-lines form."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, overload

from dexviz.history.event import Event
from dexviz.history.jsonl import (
    FORMAT_NAME,
    FORMAT_VERSION,
    HistoryFormatError,
    decode_history_bytes,
    dump_jsonl,
    parse_jsonl,
    read_history_file,
)
from dexviz.history.kinds import EventKind
from dexviz.history.output_files import write_output_text

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "History", "HistoryFormatError"]

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
        """Return the history as JSON lines: a header, then one event per line (sorted keys).

        The header also holds the event count and the SHA-256 of the event lines, so that
        :meth:`from_jsonl` can tell a cut-off or changed file from the original, and, for a
        slice such as ``history[10:]``, the first ``seq`` (the events keep theirs).

        Raises:
            ValueError: The events skip or repeat a ``seq`` (such as ``history[::2]``).
        """
        return dump_jsonl(self.flow_id, self._events)

    @classmethod
    def from_jsonl(cls, text: str | Iterable[str]) -> History:
        """Load a history written by ``to_jsonl``; malformed input raises HistoryFormatError.

        Every line is checked (see :mod:`dexviz.history.jsonl`); either all events load or none.
        """
        return cls(parse_jsonl(text))

    def save(self, path: str | Path) -> Path:
        """Write ``to_jsonl()`` to ``path`` and return the path.

        The file is written whole or not at all (an existing one stays as it was on failure).

        Raises:
            ValueError: The events skip or repeat a ``seq``; nothing is written.
            OutputWriteError: The file could not be written (an OSError naming it).
        """
        return write_output_text(path, self.to_jsonl(), newline="\n")

    @classmethod
    def load(cls, path: str | Path) -> History:
        """Read a history file written by ``save``; errors name the file and the line.

        Raises:
            HistoryFormatError: The file is not a valid history (or not a regular file: a
                FIFO or device is refused rather than read).
            OSError: The file cannot be read (missing, a directory, no permission).
        """
        source = Path(path)
        try:
            return cls.from_jsonl(decode_history_bytes(read_history_file(source)))
        except HistoryFormatError as error:
            raise HistoryFormatError(f"{source}: {error}") from None
