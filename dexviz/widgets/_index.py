"""Kept importable for existing code: ``dexviz.replay._index``, unchanged."""

from dexviz.replay._index import (
    HistoryIndex,
)

__all__ = ["HistoryIndex"]
