"""Kept importable for existing code: ``dexviz.replay.timeline_cursor``, unchanged."""

from dexviz.replay.timeline_cursor import (
    TimelinePicture,
    timeline_picture,
)

__all__ = ["TimelinePicture", "timeline_picture"]
