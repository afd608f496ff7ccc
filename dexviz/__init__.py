"""dexviz: Dex in a notebook — an in-process Dex engine with views of what it ran.

The authoring API keeps dex-python-sdk's names (``from dexviz import Flow, Step, go_to``);
``simulate`` and ``Engine`` run Flows on a deterministic virtual clock; every view reads the
History the engine records. Views that need graphviz, matplotlib or pandas load them lazily.
"""

from typing import Any

from dexviz.engine import (
    CancelExecution,
    Client,
    Engine,
    FailAttempt,
    FaultPlan,
    FlowState,
    MemoryStore,
    SimulationRun,
    SQLiteStore,
    Store,
    simulate,
)
from dexviz.history import Event, EventKind, History, HistoryFormatError
from dexviz.sdk import *  # noqa: F403 - the SDK's names are dexviz's names
from dexviz.sdk import __all__ as _sdk_all

__version__ = "0.1.0"

_LAZY = {
    "definition_graph": "dexviz.viz.definition_view",
    "execution_graph": "dexviz.viz.execution_view",
    "timeline": "dexviz.viz.timeline",
    "frames": "dexviz.viz.frames",
    "exclusive_sections": "dexviz.analysis.exclusive",
    "concurrency": "dexviz.analysis.concurrency",
    "critical_path": "dexviz.analysis.critical_path",
    "state_at": "dexviz.analysis.state",
    "Debugger": "dexviz.widgets.debugger",
}


def __getattr__(name: str) -> Any:
    """Load the views on first use, so ``import dexviz`` stays fast and dependency-free."""
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'dexviz' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


__all__ = [
    *_sdk_all,
    *sorted(_LAZY),
    "CancelExecution",
    "Client",
    "Engine",
    "Event",
    "EventKind",
    "FailAttempt",
    "FaultPlan",
    "FlowState",
    "History",
    "HistoryFormatError",
    "MemoryStore",
    "SQLiteStore",
    "SimulationRun",
    "Store",
    "simulate",
]
