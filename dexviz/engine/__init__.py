"""The in-process Dex engine: simulation on a virtual clock, with history and fault injection."""

from dexviz.engine.client import Client
from dexviz.engine.engine import Engine
from dexviz.engine.faults import CancelExecution, FailAttempt, FaultPlan, InjectedFailure
from dexviz.engine.flow_state import ActiveExecution, FlowState
from dexviz.engine.simulate import SimulationRun, simulate
from dexviz.engine.sqlite_store import SQLiteStore
from dexviz.engine.store import MemoryStore, Store

__all__ = [
    "ActiveExecution",
    "CancelExecution",
    "Client",
    "Engine",
    "FailAttempt",
    "FaultPlan",
    "FlowState",
    "InjectedFailure",
    "MemoryStore",
    "SQLiteStore",
    "SimulationRun",
    "Store",
    "simulate",
]
