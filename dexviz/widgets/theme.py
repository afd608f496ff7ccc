"""Kept importable for existing code: ``dexviz.replay.theme``, unchanged."""

from dexviz.replay.theme import (
    CSS,
    LEGEND,
    SELECTED_COLOR,
)

__all__ = ["CSS", "LEGEND", "SELECTED_COLOR"]
