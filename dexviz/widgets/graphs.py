"""Kept importable for existing code: ``dexviz.replay.graphs``, unchanged."""

from dexviz.replay.graphs import (
    AUTO_COLLAPSE_ABOVE,
    GraphUnavailable,
    Pictures,
    RunLineage,
)

__all__ = ["AUTO_COLLAPSE_ABOVE", "GraphUnavailable", "Pictures", "RunLineage"]
