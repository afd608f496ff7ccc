"""Compare runs and check a change: ``diff`` two runs, ``replay_check`` recorded runs.

``diff(a, b)`` aligns two runs by Step execution lineage and lists what differs;
``replay_check(history, flows)`` re-runs a recorded history against the current Flow code and
says whether it still decides the same; ``replay_check_store`` does so for every run of a
directory of history files or a SQLite store.
"""

from dexviz.compare.diffing import diff
from dexviz.compare.replay import (
    Divergence,
    ReplayCheck,
    ReplayError,
    SourceLocation,
    replay_check,
)
from dexviz.compare.replay_store import StoreCheck, replay_check_store
from dexviz.viz.diff_view import RunDiff

__all__ = [
    "Divergence",
    "ReplayCheck",
    "ReplayError",
    "RunDiff",
    "SourceLocation",
    "StoreCheck",
    "diff",
    "replay_check",
    "replay_check_store",
]
