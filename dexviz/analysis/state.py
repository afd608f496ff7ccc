"""Flow state at any event: Channel queues, reserved messages, Attributes, active executions.

``StateFolder`` applies a history's events forward and keeps a checkpoint every
``checkpoint_every`` events, so moving forward costs one event and jumping back costs at most
one checkpoint copy plus ``checkpoint_every`` events: stepping through a history of thousands of
events stays cheap in both directions. ``state_at(history, index)`` is the one-shot form.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from dexviz.analysis._state_fold import (
    ActiveExecution,
    MutableState,
    QueuedMessage,
    ReservedMessage,
)
from dexviz.history import History
from dexviz.history.instance_names import shown_name

__all__ = [
    "ActiveExecution",
    "FlowStateView",
    "QueuedMessage",
    "ReservedMessage",
    "StateFolder",
    "state_at",
]


@dataclass(frozen=True)
class FlowStateView:
    """The Flow's state right after the event at ``index`` of the history was applied.

    Attributes:
        index: 0-based position of the event in the history.
        seq: That event's ``seq``.
        time_ns: That event's engine time.
        run_id: The run the event belongs to.
        channels: Channel name -> queued messages, front first (declared Channels are
            present even when empty). A ChannelMap instance is ``map-name/key`` with the key as
            given, not percent-encoded as in its physical name
            (:func:`dexviz.history.instance_names.shown_name`).
        reserved: Channel name (as in ``channels``) -> messages taken by a wait and not yet
            committed.
        attributes: Attribute name -> value; an AttributeMap instance is ``map-name/key``,
            the key as given.
        active: The active executions, in creation order.
        closed: The FlowClosed status once the run closed, else None.
        completion_requested: Whether a graceful completion was requested.
    """

    index: int
    seq: int
    time_ns: int
    run_id: str
    channels: Mapping[str, tuple[QueuedMessage, ...]]
    reserved: Mapping[str, tuple[ReservedMessage, ...]]
    attributes: Mapping[str, Any]
    active: tuple[ActiveExecution, ...]
    closed: str | None
    completion_requested: bool

    def holder_of(self, channel: str) -> tuple[str, ...]:
        """The executions holding messages of ``channel`` (for a token Channel: its holder).

        ``channel`` is a name as shown, or a physical name (a map instance's escaped key).
        """
        held = self.reserved.get(channel)
        if held is None:
            held = self.reserved.get(shown_name(channel), ())
        return tuple(dict.fromkeys(m.execution_id for m in held))

    def phase_of(self, execution_id: str) -> str | None:
        """The phase of an active execution, or None when it is not active."""
        return next((a.phase for a in self.active if a.execution_id == execution_id), None)

    def __repr__(self) -> str:
        queued = sum(len(q) for q in self.channels.values())
        held = sum(len(r) for r in self.reserved.values())
        return (f"FlowStateView(index={self.index}, seq={self.seq}, active={len(self.active)}, "
                f"queued={queued}, reserved={held}, attributes={len(self.attributes)}, "
                f"closed={self.closed!r})")


def _view(state: MutableState, index: int, history: History) -> FlowStateView:
    event = history[index]
    return FlowStateView(
        index=index,
        seq=event.seq,
        time_ns=event.time_ns,
        run_id=event.run_id,
        channels=MappingProxyType({n: tuple(q.values()) for n, q in state.queues.items()}),
        reserved=MappingProxyType({n: tuple(r.values()) for n, r in state.reserved.items() if r}),
        attributes=MappingProxyType(dict(state.attributes)),
        active=tuple(state.active.values()),
        closed=state.closed,
        completion_requested=state.completion_requested,
    )


class StateFolder:
    """Computes FlowStateViews of one history incrementally, with checkpoints.

    Args:
        history: The history to step through.
        checkpoint_every: Keep a copy of the state every this many events.

    Examples:
        >>> folder = StateFolder(History())
        >>> len(folder)
        0
    """

    def __init__(self, history: History, *, checkpoint_every: int = 128) -> None:
        if checkpoint_every < 1:
            raise ValueError(f"checkpoint_every must be at least 1, got {checkpoint_every}")
        self._history = history
        self._every = checkpoint_every
        self._state = MutableState()
        self._applied = 0
        self._checkpoints: dict[int, MutableState] = {0: self._state.copy()}
        self._views: OrderedDict[int, FlowStateView] = OrderedDict()

    def __len__(self) -> int:
        return len(self._history)

    def __repr__(self) -> str:
        return (f"StateFolder(events={len(self._history)}, applied={self._applied}, "
                f"checkpoints={len(self._checkpoints)})")

    @property
    def history(self) -> History:
        """The history being stepped through."""
        return self._history

    def state_at(self, index: int) -> FlowStateView:
        """The state after the event at ``index`` (negative indexes count from the end).

        Raises:
            IndexError: ``index`` is outside the history (the message gives its length).
        """
        size = len(self._history)
        position = index + size if index < 0 else index
        if not 0 <= position < size:
            raise IndexError(f"event index {index} is outside the history of {size} events")
        cached = self._views.get(position)
        if cached is not None:
            self._views.move_to_end(position)
            return cached
        if position + 1 < self._applied:
            # Going back: resume from the last checkpoint at or before the target and keep the
            # views passed on the way, so further steps back are answered from the cache.
            base = max(k for k in self._checkpoints if k <= position)
            self._state = self._checkpoints[base].copy()
            self._applied = base
            while self._applied <= position:
                self._apply_next()
                self._remember(self._applied - 1)
            return self._views[position]
        while self._applied <= position:
            self._apply_next()
        return self._remember(position)

    def _apply_next(self) -> None:
        self._state.apply(self._history[self._applied])
        self._applied += 1
        if self._applied % self._every == 0 and self._applied not in self._checkpoints:
            self._checkpoints[self._applied] = self._state.copy()

    def _remember(self, position: int) -> FlowStateView:
        view = _view(self._state, position, self._history)
        self._views[position] = view
        while len(self._views) > 2 * self._every:
            self._views.popitem(last=False)
        return view


def state_at(history: History, index: int) -> FlowStateView:
    """The Flow's state right after the event at ``index`` (0-based; negative from the end).

    For stepping through many positions, keep one StateFolder instead.

    Raises:
        IndexError: ``index`` is outside the history.
    """
    return StateFolder(history, checkpoint_every=max(1, len(history))).state_at(index)
