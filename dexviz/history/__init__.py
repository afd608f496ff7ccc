"""The history layer: events, their kinds, and the History object (standard library only)."""

from dexviz.history.event import Event
from dexviz.history.history import History, HistoryFormatError
from dexviz.history.kinds import SEMANTIC_KINDS, EventKind

__all__ = ["SEMANTIC_KINDS", "Event", "EventKind", "History", "HistoryFormatError"]
