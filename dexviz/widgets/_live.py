"""Kept importable for existing code: ``dexviz.replay._live``, unchanged."""

from dexviz.replay._live import (
    FailNextAttempt,
    LiveDriver,
    breakpoint_name,
    predicate,
)

__all__ = ["FailNextAttempt", "LiveDriver", "breakpoint_name", "predicate"]
