"""Kept importable for existing code: ``dexviz.replay.panels``, unchanged."""

from dexviz.replay.panels import (
    ACTIVE_ROWS,
    VALUE_LIMIT,
    active_table,
    attributes_table,
    channel_table,
    event_detail,
    event_list,
    format_value,
    heading,
)

__all__ = [
    "ACTIVE_ROWS",
    "VALUE_LIMIT",
    "active_table",
    "attributes_table",
    "channel_table",
    "event_detail",
    "event_list",
    "format_value",
    "heading",
]
