"""Kept importable for existing code: ``dexviz.replay.highlight``, unchanged."""

from dexviz.replay.highlight import (
    CursorMarks,
    LineageLayout,
    MarkedSvg,
    SvgCache,
    definition_classes,
    lineage_classes,
    selected_node,
)

__all__ = [
    "CursorMarks",
    "LineageLayout",
    "MarkedSvg",
    "SvgCache",
    "definition_classes",
    "lineage_classes",
    "selected_node",
]
