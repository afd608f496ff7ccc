"""Kept importable for existing code: ``dexviz.replay.model``, unchanged."""

from dexviz.replay.model import (
    CursorState,
    DebuggerModel,
    HistorySource,
)

__all__ = ["CursorState", "DebuggerModel", "HistorySource"]
