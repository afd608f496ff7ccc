"""The in-process Dex engine: simulation on a virtual clock, with history and fault injection."""

from dexviz.engine.client import Client
from dexviz.engine.engine import Engine
from dexviz.engine.faults import (
    CancelExecution,
    CrashAfterCommit,
    EngineCrashed,
    FailAttempt,
    FaultPlan,
    InjectedFailure,
)
from dexviz.engine.flow_state import ActiveExecution, FlowState
from dexviz.engine.recovery import RecoveryError, RecoveryReport
from dexviz.engine.simulate import SimulationRun, simulate
from dexviz.engine.sqlite_schema import StoreError
from dexviz.engine.sqlite_store import SQLiteStore
from dexviz.engine.store import MemoryStore, Store

__all__ = [
    "ActiveExecution",
    "CancelExecution",
    "Client",
    "CrashAfterCommit",
    "Engine",
    "EngineCrashed",
    "EngineSnapshot",
    "EngineState",
    "FailAttempt",
    "FaultPlan",
    "FlowState",
    "InjectedFailure",
    "MemoryStore",
    "RecoveryError",
    "RecoveryReport",
    "SQLiteStore",
    "SimulationRun",
    "SnapshotError",
    "Store",
    "StoreError",
    "simulate",
]

_SNAPSHOTS = frozenset({"EngineSnapshot", "EngineState", "SnapshotError"})


def __getattr__(name: str) -> object:
    """The snapshot names, imported on first use (pickle is not needed to run a Flow)."""
    if name in _SNAPSHOTS:
        from dexviz.engine import engine_state

        return getattr(engine_state, name)
    raise AttributeError(f"module 'dexviz.engine' has no attribute {name!r}")
