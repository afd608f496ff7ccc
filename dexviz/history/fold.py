"""The history fold: one handler per EventKind, which every fold of a history builds on.

Recovery and time travel (in the engine), the state at an event and the execution tables (in
analysis) each fold a run's events into records of their own. They all subclass
:class:`HistoryFold`: a subclass overrides the ``on_<kind>`` handlers of the kinds it reads, and
:meth:`HistoryFold.apply` dispatches each event to its kind's handler through one table built
when the subclass is defined (kinds a subclass does not handle, and kinds this version does not
know, cost one dictionary lookup). The payload readers below read a payload the way a history
loaded from a file must be read: a member of the wrong type counts as absent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

from dexviz.history.event import Event
from dexviz.history.kinds import EventKind

__all__ = ["HANDLER_NAMES", "HistoryFold", "integer", "items", "mapping", "split_runs", "text"]

HANDLER_NAMES: dict[str, str] = {str(kind): f"on_{kind.name.lower()}" for kind in EventKind}
"""Event kind name -> the name of its handler method (``StepExecutionCreated`` ->
``on_step_execution_created``)."""

Handler = Callable[[Any, Event], None]


class HistoryFold:
    """Base of every history fold: one no-op handler per EventKind, overridden by subclasses.

    Examples:
        >>> class Count(HistoryFold):
        ...     def __init__(self) -> None:
        ...         self.created = 0
        ...     def on_step_execution_created(self, event: Event) -> None:
        ...         self.created += 1
        >>> Count.handled_kinds()
        ('StepExecutionCreated',)
    """

    _handlers: ClassVar[dict[str, Handler]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        table: dict[str, Handler] = {}
        for kind, name in HANDLER_NAMES.items():
            handler = getattr(cls, name)
            if handler is not getattr(HistoryFold, name):
                table[kind] = handler
        cls._handlers = table

    @classmethod
    def handled_kinds(cls) -> tuple[str, ...]:
        """The kinds this fold has a handler of its own for, in EventKind order."""
        return tuple(cls._handlers)

    def apply(self, event: Event) -> None:
        """Fold one event: call its kind's handler (kinds without one change nothing)."""
        # EventKind is a StrEnum, so an event's kind and its plain name find the same handler.
        handler = self._handlers.get(event.kind)
        if handler is not None:
            handler(self, event)

    def apply_all(self, events: Iterable[Event]) -> None:
        """Fold every event of ``events`` in order."""
        for event in events:
            self.apply(event)

    # -- Dex's semantic events ---------------------------------------------------------------
    def on_flow_started_or_continued(self, event: Event) -> None:
        """A run started, or continued (a time travel, continue-as-new, a Flow retry)."""

    def on_step_wait_for_completed(self, event: Event) -> None:
        """A WaitFor committed: its writes and the wait it registered."""

    def on_step_wait_for_failed(self, event: Event) -> None:
        """A WaitFor failed for good (its policy says whether Execute still runs)."""

    def on_step_execute_completed(self, event: Event) -> None:
        """An Execute committed: its writes and its decision."""

    def on_step_execute_failed(self, event: Event) -> None:
        """An Execute failed for good (maybe routed to a recovery execution)."""

    def on_step_wait_for_pending(self, event: Event) -> None:
        """A WaitFor attempt was cut off by the end of the run."""

    def on_step_execute_pending(self, event: Event) -> None:
        """An Execute attempt was cut off by the end of the run."""

    def on_rpc_execution_completed(self, event: Event) -> None:
        """An RPC committed its writes."""

    def on_channel_external_publish(self, event: Event) -> None:
        """A client published to a Channel from outside the Flow."""

    def on_time_travel_fork(self, event: Event) -> None:
        """A run was forked from an earlier run's events."""

    def on_flow_closed(self, event: Event) -> None:
        """The run closed."""

    # -- dexviz's finer trace ----------------------------------------------------------------
    def on_step_execution_created(self, event: Event) -> None:
        """A Step execution was created (by a decision, a start, a fork or continue-as-new)."""

    def on_attempt_started(self, event: Event) -> None:
        """A method attempt started."""

    def on_attempt_failed(self, event: Event) -> None:
        """A method attempt failed (final, or with a retry scheduled)."""

    def on_wait_satisfied(self, event: Event) -> None:
        """A condition wait was satisfied and took its messages."""

    def on_message_published(self, event: Event) -> None:
        """A message entered a Channel queue."""

    def on_message_consumed(self, event: Event) -> None:
        """A satisfied wait took a message from its queue."""

    def on_message_returned(self, event: Event) -> None:
        """A canceled execution gave a reserved message back to the front of its queue."""

    def on_timer_started(self, event: Event) -> None:
        """A Timer condition was registered with its deadline."""

    def on_timer_fired(self, event: Event) -> None:
        """A Timer condition's deadline passed."""

    def on_timer_skipped(self, event: Event) -> None:
        """A Timer condition was skipped (its wait was satisfied otherwise)."""

    def on_execution_canceled(self, event: Event) -> None:
        """An execution was canceled."""

    def on_completion_requested(self, event: Event) -> None:
        """A Step asked for a graceful completion of the Flow."""

    def on_recovered(self, event: Event) -> None:
        """The engine recovered the run from its store."""


def text(payload: Mapping[str, Any], key: str) -> str | None:
    """``payload[key]`` when it is a string, else None."""
    value = payload.get(key)
    return value if isinstance(value, str) else None


def integer(payload: Mapping[str, Any], key: str) -> int | None:
    """``payload[key]`` when it is an int (not a bool), else None."""
    value = payload.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def mapping(payload: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``payload[key]`` when it is a mapping, else an empty one."""
    value = payload.get(key)
    return value if isinstance(value, Mapping) else {}


def items(payload: Mapping[str, Any], key: str) -> list[Any]:
    """``payload[key]`` when it is a list, else an empty list."""
    value = payload.get(key)
    return value if isinstance(value, list) else []


def split_runs(events: list[Event]) -> list[list[Event]]:
    """A Flow id's history cut into its runs, in order (each a run of consecutive events)."""
    runs: list[list[Event]] = []
    current = ""
    for event in events:
        if not runs or event.run_id != current:
            runs.append([])
            current = event.run_id
        runs[-1].append(event)
    return runs
