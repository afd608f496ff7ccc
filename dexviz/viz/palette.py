"""Colours shared by the execution views, so the graph and the timeline speak one language.

Status colours follow Dex Web's execution graph (spec: dex-visualization-anchor §1.3), with the
two gaps it documents closed: Completed gets its own colour (Dex Web's completed tone, brand
green) and a legend entry, and Pending gets Dex Web's pending purple instead of sharing Active's
lime.
"""

from __future__ import annotations

from types import MappingProxyType

__all__ = [
    "CLOSE_COLORS",
    "EDGE_COLORS",
    "SEGMENT_COLORS",
    "SOURCE_COLORS",
    "STATUS_COLORS",
    "TOKEN_COLOR",
    "OVERLAP_COLOR",
]

STATUS_COLORS = MappingProxyType(
    {
        "Active": ("#8fc93d", "#f6fbef"),
        "Pending": ("#7c5ad6", "#f4f0fc"),
        "Waiting": ("#d39732", "#fdf6e8"),
        "Failed": ("#c95252", "#fff5f4"),
        "Canceled": ("#7b8581", "#f4f6f5"),
        "Completed": ("#4f8127", "#f1f8ec"),
    }
)
"""Execution status -> (border/ink colour, fill colour)."""

SOURCE_COLORS = ("#0f7c86", "#e8f6f7")
"""Source nodes (Flow start, RPC, client publish): (border, fill); teal, so no status shares it."""

CLOSE_COLORS = MappingProxyType(
    {
        "COMPLETED": ("#265c86", "#e3eff8"),
        "FAILED": ("#c95252", "#fff5f4"),
        "TERMINATED": ("#c95252", "#fff5f4"),
        "CANCELED": ("#9a6b2f", "#fbf1e4"),
    }
)
"""Flow close status -> (border, fill), as Dex Web's run status badges."""

EDGE_COLORS = MappingProxyType(
    {
        "lineage": "#78909c",
        "recovery": "#c43b62",
        "message": "#4f87a3",
        "close": "#265c86",
    }
)
"""Lineage-graph edge kind -> colour (Dex Web's slate edges, failure rose, condition-wait blue)."""

SEGMENT_COLORS = MappingProxyType(
    {
        "queued": "#d5dbd9",
        "wait_for": "#d7ad59",
        "waiting": "#f6e3b4",
        "execute": STATUS_COLORS["Completed"][0],
        "failed": STATUS_COLORS["Failed"][0],
        "canceled": STATUS_COLORS["Canceled"][0],
        "pending": STATUS_COLORS["Pending"][0],
        "running": STATUS_COLORS["Active"][0],
        "backoff": "#f3d6d6",
    }
)
"""Timeline segment style -> fill colour."""

TOKEN_COLOR = "#265c86"
"""Fill of a token Channel's holding bars."""

OVERLAP_COLOR = "#d62728"
"""Where two holdings overlap."""
