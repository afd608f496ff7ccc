"""Kept importable for existing code: ``dexviz.replay.cursor``, unchanged."""

from dexviz.replay.cursor import (
    CursorState,
)

__all__ = ["CursorState"]
