"""The in-process Dex engine: simulation on a virtual clock, with history and fault injection."""

from typing import TYPE_CHECKING

from dexviz._lazy_exports import lazy_exports

if TYPE_CHECKING:  # at run time each name loads its module on first use (PEP 562)
    from dexviz.engine.client import Client
    from dexviz.engine.core.faults import (
        CancelExecution,
        CrashAfterCommit,
        EngineCrashed,
        FailAttempt,
        FaultPlan,
        InjectedFailure,
    )
    from dexviz.engine.core.flow_state import ActiveExecution, FlowState
    from dexviz.engine.core.store import MemoryStore, Store
    from dexviz.engine.engine import Engine
    from dexviz.engine.recovery import RecoveryError, RecoveryReport
    from dexviz.engine.sqlite.sqlite_schema import StoreError
    from dexviz.engine.sqlite.sqlite_store import SQLiteStore

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

_HOME = {
    "client": "Client",
    "engine": "Engine",
    "core.faults": (
        "CancelExecution CrashAfterCommit EngineCrashed FailAttempt FaultPlan "
        "InjectedFailure"
    ),
    "core.flow_state": "ActiveExecution FlowState",
    "recovery": "RecoveryError RecoveryReport",
    "sqlite.sqlite_schema": "StoreError",
    "sqlite.sqlite_store": "SQLiteStore",
    "core.store": "MemoryStore Store",
    "engine_state": "EngineSnapshot EngineState SnapshotError",  # pickle loads only for these
}
"""Each public module (its path inside the package) and the names it defines, space-separated."""

__getattr__, __dir__ = lazy_exports(globals(), _HOME)


# Last and eager, because the function shares its module's name: once dexviz.engine.simulate is
# imported, the package attribute ``simulate`` would be that module, not this function.
from dexviz.engine.simulate import SimulationRun, simulate  # noqa: E402
