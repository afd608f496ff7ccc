"""Kept importable for existing code: ``dexviz.replay.focus``, unchanged."""

from dexviz.replay.focus import (
    MIN_TEXT_PX,
    Focus,
    definition_focus_classes,
    neighbourhood,
    readable_width,
    scaled,
    with_min_width,
)

__all__ = [
    "MIN_TEXT_PX",
    "Focus",
    "definition_focus_classes",
    "neighbourhood",
    "readable_width",
    "scaled",
    "with_min_width",
]
