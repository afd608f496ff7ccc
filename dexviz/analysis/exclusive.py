"""Exclusive sections: who held a token Channel's message when, and whether two holdings overlap.

A holding starts when a wait consumes a message of the Channel (the handoff Step takes the
token) and lasts while the holder's execution chain works: the holder and every execution created
from it since. It ends at the first commit in that chain that publishes to the Channel again (the
token goes back), at a MessageReturned (a canceled holder gives it back), or, for a token never
released, at the Flow's close (or the last event of a live run).

Endpoints are compared as ``(time_ns, seq)``, so a handover at one instant (release, then the next
consume) is not an overlap, while two holders who both took a message before either released are
reported even if virtual time did not move.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from dexviz.analysis.executions import RunExecutions, RunSource, as_run
from dexviz.analysis.intervals import overlap_windows
from dexviz.analysis.names import did_you_mean
from dexviz.history import Event, EventKind
from dexviz.history._plural import plural
from dexviz.history.fold import items, text

__all__ = ["ExclusiveReport", "Holding", "Overlap", "exclusive_sections", "holdings"]

_Row = TypeVar("_Row")


@dataclass(frozen=True)
class Holding:
    """One holding of a Channel's message by one execution chain.

    Attributes:
        channel: The physical Channel name.
        holder: The execution whose wait consumed the message (the handoff Step).
        step_type: The holder's Step type.
        chain: The executions of the section, holder first, in creation order.
        message_ids: The messages the holder consumed from the Channel.
        start_ns, start_seq: When (and at which event) the wait consumed them.
        end_ns, end_seq: When the holding ended.
        released_by: The execution whose commit published to the Channel again, if any.
        end: ``"published"``, ``"returned"`` (canceled holder), ``"closed"`` (never released
            before the Flow closed) or ``"open"`` (still held at the end of a live history).
    """

    channel: str
    holder: str
    step_type: str
    chain: tuple[str, ...]
    message_ids: tuple[str, ...]
    start_ns: int
    start_seq: int
    end_ns: int
    end_seq: int
    released_by: str | None
    end: str

    @property
    def duration_ns(self) -> int:
        """The holding's length in ns."""
        return self.end_ns - self.start_ns


@dataclass(frozen=True)
class Overlap:
    """Two holdings of the same Channel that overlap, and the stretch where both held."""

    first: Holding
    second: Holding
    start_ns: int
    end_ns: int

    @property
    def execution_ids(self) -> tuple[str, str]:
        """The two holders' execution ids."""
        return (self.first.holder, self.second.holder)


@dataclass(frozen=True)
class ExclusiveReport:
    """The answer to "did any two holders of Channel X overlap?" for one run.

    ``ok`` is True when no two holdings overlap. ``intervals`` lists every holding in start
    order; ``overlaps`` every overlapping pair. ``str(report)`` is a readable table.
    """

    channel: str
    flow_id: str
    run_id: str
    start_ns: int
    intervals: tuple[Holding, ...]
    overlaps: tuple[Overlap, ...]

    @property
    def ok(self) -> bool:
        """True when no two holdings overlap."""
        return not self.overlaps

    @property
    def unreleased(self) -> tuple[Holding, ...]:
        """Holdings that never gave the message back (a lost token)."""
        return tuple(h for h in self.intervals if h.end in ("closed", "open"))

    def __repr__(self) -> str:
        return (
            f"ExclusiveReport(channel={self.channel!r}, ok={self.ok}, "
            f"holdings={len(self.intervals)}, overlaps={len(self.overlaps)})"
        )

    def __str__(self) -> str:
        return self.describe()

    def describe(self, max_rows: int | None = None) -> str:
        """Return the readable table; ``str(report)`` is ``describe()``.

        Args:
            max_rows: At most this many rows of each section (holdings, overlaps, unreleased
                holdings); a cut section ends with a line saying how many rows were left out.
                None shows every row.

        Raises:
            ValueError: If ``max_rows`` is negative.
        """
        if max_rows is not None and max_rows < 0:
            raise ValueError(f"max_rows must be None or at least 0, not {max_rows}")
        return "\n".join(self._lines(max_rows))

    def _seconds(self, time_ns: int) -> str:
        return f"{(time_ns - self.start_ns) / 1e9:8.3f}"

    def _lines(self, max_rows: int | None) -> Iterator[str]:
        verdict = "OK, no two holdings overlap" if self.ok else (
            f"FAILED, {plural(len(self.overlaps), 'overlapping pair')}"
        )
        yield (f"Exclusive sections of {self.channel!r} in Flow {self.flow_id!r} "
               f"(run {self.run_id}): {plural(len(self.intervals), 'holding')}, {verdict}")
        if self.intervals:
            yield f"  {'holder':<28} {'from s':>8} {'to s':>8}  end        released by"
        shown, hidden = _cut(self.intervals, max_rows)
        for h in shown:
            yield (f"  {h.holder:<28} {self._seconds(h.start_ns)} {self._seconds(h.end_ns)}  "
                   f"{h.end:<10} {h.released_by or '-'}")
        yield from _more(hidden, "holding")
        overlaps, hidden = _cut(self.overlaps, max_rows)
        for o in overlaps:
            yield (f"  OVERLAP {o.first.holder} and {o.second.holder}: both held from "
                   f"{self._seconds(o.start_ns).strip()} s to {self._seconds(o.end_ns).strip()} s")
        yield from _more(hidden, "overlapping pair")
        unreleased, hidden = _cut(self.unreleased, max_rows)
        for h in unreleased:
            yield f"  UNRELEASED {h.holder}: never published {self.channel!r} back"
        yield from _more(hidden, "unreleased holding")


def _cut(rows: tuple[_Row, ...], max_rows: int | None) -> tuple[tuple[_Row, ...], int]:
    """The rows to show and how many are left out."""
    if max_rows is None or len(rows) <= max_rows:
        return rows, 0
    return rows[:max_rows], len(rows) - max_rows


def _more(hidden: int, noun: str) -> Iterator[str]:
    if hidden:
        yield f"  ... and {plural(hidden, 'more ' + noun)} not shown"


@dataclass
class _Open:
    holder: str
    step_type: str
    start: Event
    message_ids: list[str]
    chain: list[str] = field(default_factory=list)


class _Tracker:
    """Follows open holdings through the run's events."""

    def __init__(self, channel: str, run: RunExecutions) -> None:
        self.channel = channel
        self.run = run
        self.open: list[_Open] = []
        self.done: list[Holding] = []

    def apply(self, event: Event) -> None:
        kind, payload = str(event.kind), event.payload
        if kind == EventKind.STEP_EXECUTION_CREATED and event.execution_id:
            parent = text(payload, "from_execution_id")
            for holding in self.open:
                if parent in holding.chain:
                    holding.chain.append(event.execution_id)
        if text(payload, "channel") != self.channel:
            return
        if kind == EventKind.MESSAGE_CONSUMED:
            self._consumed(event)
        elif kind == EventKind.MESSAGE_PUBLISHED:
            self._close_first(event, text(payload, "publisher"), "published")
        elif kind == EventKind.MESSAGE_RETURNED:
            self._close_first(event, text(payload, "from"), "returned", holder_only=True)

    def _consumed(self, event: Event) -> None:
        consumer = text(event.payload, "consumer") or event.execution_id or ""
        message_id = str(event.payload.get("message_id"))
        for holding in self.open:
            if holding.holder == consumer:
                holding.message_ids.append(message_id)
                return
        record = self.run.get(consumer)
        step_type = record.step_type if record else (event.step_type or "")
        self.open.append(_Open(consumer, step_type, event, [message_id], [consumer]))

    def _close_first(
        self, event: Event, who: str | None, end: str, holder_only: bool = False
    ) -> None:
        for holding in self.open:
            if (holding.holder == who) if holder_only else (who in holding.chain):
                self.open.remove(holding)
                self.done.append(self._freeze(holding, event.time_ns, event.seq, who, end))
                return

    def _freeze(self, h: _Open, end_ns: int, end_seq: int, by: str | None, end: str) -> Holding:
        return Holding(
            self.channel, h.holder, h.step_type, tuple(h.chain), tuple(h.message_ids),
            h.start.time_ns, h.start.seq, end_ns, end_seq, by if end == "published" else None, end,
        )

    def finish(self) -> list[Holding]:
        """Close what is still open at the run's end; return every holding in start order."""
        run = self.run
        last_seq = run.events[-1].seq if run.events else 0
        end = "closed" if run.close else "open"
        end_seq = run.close.seq if run.close else last_seq + 1
        self.done.extend(self._freeze(h, run.end_ns, end_seq, None, end) for h in self.open)
        self.open = []
        return sorted(self.done, key=lambda h: (h.start_seq, h.holder))


def _check_channel(run: RunExecutions, channel: str) -> None:
    # A spec without a "channels" entry (a hand-made history) cannot be checked; an empty
    # list is a Flow without Channels, where any name is a typo.
    if "channels" not in run.spec:
        return
    declared = [c for c in items(run.spec, "channels") if isinstance(c, Mapping)]
    for entry in declared:
        name = str(entry.get("name"))
        is_map = entry.get("kind") == "channel_map"
        if channel == name or (is_map and channel.startswith(name + "/")):
            return
    known = sorted(str(c.get("name")) for c in declared)
    raise ValueError(
        f"Flow {run.flow_type or run.flow_id!r} has no Channel {channel!r}"
        f"{did_you_mean(channel, known)} (its Channels: {', '.join(known) or 'none'})"
    )


def holdings(source: RunSource, channel: str, *, run_id: str | None = None) -> tuple[Holding, ...]:
    """Every holding of ``channel``'s messages in one run, in start order.

    Raises:
        ValueError: the Flow's recorded spec declares no such Channel.
    """
    run = as_run(source, run_id)
    _check_channel(run, channel)
    tracker = _Tracker(channel, run)
    for event in run.events:
        tracker.apply(event)
    return tuple(tracker.finish())


def _overlaps(intervals: Sequence[Holding]) -> tuple[Overlap, ...]:
    return tuple(Overlap(*window) for window in overlap_windows(intervals))


def exclusive_sections(
    source: RunSource, channel: str, *, run_id: str | None = None
) -> ExclusiveReport:
    """Check that no two holders of token Channel ``channel`` overlap in one run.

    Args:
        source: A History (its last run, or ``run_id``) or a run's RunExecutions.
        channel: The physical Channel name, e.g. ``"contractEditToken"``.
        run_id: The run to check when ``source`` is a History.

    Returns:
        An ExclusiveReport: ``.ok``, ``.intervals`` (one per holding) and ``.overlaps``.

    Raises:
        ValueError: the Flow's recorded spec declares no Channel ``channel``.
    """
    run = as_run(source, run_id)
    intervals = holdings(run, channel)
    return ExclusiveReport(
        channel, run.flow_id, run.run_id, run.start_ns, intervals, _overlaps(intervals)
    )
